"""The errors of a CDN download (all :class:`~pplx_archiver.errors.FetchError`)::

    AssetDownloadError        reason: short text for the manifest (no URL query in it)
    ├── UrlExpiredError       the signed URL is no longer accepted
    └── AssetTooLargeError    more than max_bytes (announced or received)

Raised by the downloader (:mod:`.download`) and by its redirect check (:mod:`.redirects`).
"""

from __future__ import annotations

from pplx_archiver.errors import FetchError


class AssetDownloadError(FetchError):
    """An asset download failed; ``reason`` is safe to store in the manifest and to log."""

    def __init__(
        self,
        reason: str,
        *,
        status: int | None = None,
        transient: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(reason, status=status)
        self.reason = reason
        self.transient = transient
        self.retry_after = retry_after


class UrlExpiredError(AssetDownloadError):
    """The CDN refused the signed URL (expired or no longer valid)."""


class AssetTooLargeError(AssetDownloadError):
    """The asset is larger than the configured maximum; ``seen`` bytes were announced/read."""

    def __init__(self, limit: int, seen: int) -> None:
        super().__init__(f"larger than the {limit}-byte limit", status=None)
        self.limit = limit
        self.seen = seen
