"""Simulated Perplexity: a Starlette app, a seeded synthetic account and its truth manifest."""
