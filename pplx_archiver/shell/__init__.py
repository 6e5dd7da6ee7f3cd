"""Async shell: HTTP client, rate limiter, retries, listing, scheduler and the archive store."""
