"""The network: API client, retries, rate limiting, cookies, the session, downloads, listing."""
