"""pplx-archiver: archive a Perplexity account into a complete, re-renderable local archive."""

__version__ = "0.1.0"
