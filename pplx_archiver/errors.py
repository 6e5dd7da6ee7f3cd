"""The one exception tree of pplx-archiver and the exit code of each branch.

::

    PplxError                         exit 1  (base; "something failed")
    ├── ConfigError                   exit 2  bad option, bad config file, bad cookie file
    │   └── SearchQueryError                  an unusable search query (``--raw`` FTS5 syntax)
    ├── AuthError                     exit 3  no usable session
    │   ├── LoggedOutError                    session probe answered ``{}``
    │   └── SessionExpiredError               401 / JSON 403 from the API
    ├── InterruptedRun                exit 4  Ctrl-C / SIGTERM; state is consistent
    ├── ChallengeAbort                exit 5  Cloudflare kept challenging; run stopped
    ├── PayloadError                  exit 1  a response did not have the expected shape
    │   └── BudgetError                       one thread's responses exceed a budget (it fails)
    ├── StoreError                    exit 1  the archive could not be written or read
    │   └── IndexCorruptError                 index/archive.sqlite unreadable: run reindex
    ├── ScheduleError                 exit 1  systemctl / crontab refused a schedule change
    ├── ArchiveBusyError              exit 6  another process writes this archive (lock held)
    ├── ListingShrankError            exit 8  a complete listing lacks many known threads
    ├── FetchError                    exit 1  one request failed (shell/net/seam.py, http.py)
    │   ├── TransientError                    5xx, timeout, connection, truncated/non-JSON body
    │   │   ├── ConnectionFailedError  exit 7 the host could not be reached (names the host)
    │   │   └── DeadlineError                 a request or download overran its deadline
    │   ├── BodyTooLargeError                 an API body exceeded the size cap
    │   ├── IdentityMismatchError             a payload names another thread than requested
    │   ├── RateLimitedError                  429 / RATE_LIMITED (``retry_after`` seconds)
    │   ├── ChallengeError                    Cloudflare challenge page (HTML 403/503)
    │   ├── NotFoundError                     404 (not terminal: new threads 404 briefly)
    │   ├── ForbiddenError                    403 VIEW_THREAD_NOT_ALLOWED and similar
    │   └── TerminalThreadError               400 ENTRY_DELETED / ENTRY_EXPIRED
    └── AskError                      exit 11 an ask stream reported a problem in-band (pplx-ask)
        ├── AskRateLimitedError       exit 10 ``error_code`` RATE_LIMIT(ED) / quota in the stream
        ├── AskFailedError            exit 11 ``status: FAILED`` or another in-band error code
        ├── ClarifyingQuestionsError  exit 12 deep research stopped to ask questions
        ├── AskSessionError           exit 13 HTTP 200 but no thread started (expired session)
        ├── AskTimeoutError           exit 14 no complete answer within ``--timeout``
        └── AskIncompleteError        exit 15 the stream ended before the answer completed

Each class carries its exit code (``exit_code``, inherited unless set); :func:`exit_code_for`
gives the code of any exception — the CLI exits with it, and a run records it in its summary.
This module imports nothing but the standard library, so the pure core may raise
:class:`PayloadError`.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILURES = 1
EXIT_USAGE = 2
EXIT_AUTH = 3
EXIT_INTERRUPTED = 4
EXIT_CHALLENGE = 5
EXIT_BUSY = 6
EXIT_CONNECTION = 7
EXIT_LISTING_SHRANK = 8
EXIT_ASK_RATE_LIMITED = 10
EXIT_ASK_FAILED = 11
EXIT_ASK_CLARIFYING = 12
EXIT_ASK_SESSION = 13
EXIT_ASK_TIMEOUT = 14
EXIT_ASK_INCOMPLETE = 15


class PplxError(Exception):
    """Base of every error this project raises on purpose."""

    exit_code: int = EXIT_FAILURES


class ConfigError(PplxError):
    """A command-line option, environment variable, config or cookie file is unusable."""

    exit_code = EXIT_USAGE


class SearchQueryError(ConfigError):
    """A search query or filter is unusable (an FTS5 syntax mistake in a ``--raw`` query)."""


class AuthError(PplxError):
    """No usable session: the run cannot start or cannot go on."""

    exit_code = EXIT_AUTH


class LoggedOutError(AuthError):
    """The session probe says logged out (``{}``); lists would come back empty."""


class SessionExpiredError(AuthError):
    """The API answered 401 or an API-level 403: the cookie is dead."""


class InterruptedRun(PplxError):
    """The run was stopped by a signal after leaving the archive consistent.

    ``reported`` is True when the run's printed summary already said so.
    """

    exit_code = EXIT_INTERRUPTED
    reported = False


class ChallengeAbort(PplxError):
    """Cloudflare challenged too often; the run stopped instead of hammering it."""

    exit_code = EXIT_CHALLENGE


class PayloadError(PplxError):
    """A payload had an unexpected shape; ``path`` is the JSON path of the bad value."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


class BudgetError(PayloadError):
    """A thread's responses would become more than a budget allows (``budget`` names it:
    entries, turns, blocks, sources, depth, bytes); the thread fails, nothing of it is
    written, and the run goes on."""

    def __init__(self, path: str, budget: str, message: str) -> None:
        self.budget = budget
        super().__init__(path, message)


class StoreError(PplxError):
    """The archive on disk could not be written or read consistently."""


class ScheduleError(PplxError):
    """Installing or removing a schedule failed (``systemctl`` or ``crontab`` said no)."""


class IndexCorruptError(StoreError):
    """The index database is unreadable or malformed; ``pplx-export reindex`` rebuilds it."""


class ArchiveBusyError(PplxError):
    """Another process holds the archive's writer lock (``index/write.lock``)."""

    exit_code = EXIT_BUSY


class ListingShrankError(PplxError):
    """A complete listing lacks more than 5 % (and at least 10) of the threads the archive
    knows for the account: nothing was marked deleted; ``--accept-shrink`` proceeds."""

    exit_code = EXIT_LISTING_SHRANK


class FetchError(PplxError):
    """One HTTP request failed; ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None, url: str = "") -> None:
        self.status = status
        self.url = url
        super().__init__(message)


class TransientError(FetchError):
    """A failure worth retrying: 5xx, timeout, connection error, truncated or non-JSON body."""


class ConnectionFailedError(TransientError):
    """The host could not be reached (refused, unresolvable, unroutable); names the host.

    Retried like any transient error; when it ends a run the exit code is 7.
    """

    exit_code = EXIT_CONNECTION

    def __init__(self, message: str, *, url: str = "", host: str = "") -> None:
        super().__init__(message, url=url)
        self.host = host


class DeadlineError(TransientError):
    """A request or download did not complete (headers and whole body) within its deadline."""


class BodyTooLargeError(FetchError):
    """An API response body was larger than the configured cap; reading stopped there."""


class IdentityMismatchError(FetchError):
    """A thread payload claims another thread's identity than the one requested."""


class RateLimitedError(FetchError):
    """429 or ``RATE_LIMITED``; ``retry_after`` is the server's hint in seconds, if any."""

    def __init__(
        self, message: str, *, status: int | None = 429, url: str = "", retry_after: float | None
    ) -> None:
        super().__init__(message, status=status, url=url)
        self.retry_after = retry_after


class ChallengeError(FetchError):
    """A Cloudflare challenge page (HTML 403/503, ``cf-mitigated: challenge``)."""


class NotFoundError(FetchError):
    """404; not terminal, because freshly created threads answer 404 for a while."""


class ForbiddenError(FetchError):
    """An API-level 403 naming an error code such as ``VIEW_THREAD_NOT_ALLOWED``."""

    def __init__(self, message: str, *, status: int | None = 403, url: str = "", code: str = ""):
        super().__init__(message, status=status, url=url)
        self.code = code


class TerminalThreadError(FetchError):
    """400 ``ENTRY_DELETED`` or ``ENTRY_EXPIRED``: the thread is gone for good."""

    def __init__(self, message: str, *, status: int | None = 400, url: str = "", state: str):
        super().__init__(message, status=status, url=url)
        self.state = state  # "deleted" or "expired"


class AskError(PplxError):
    """An ask (``POST /rest/sse/perplexity_ask``) reported a problem inside its 200 stream."""

    exit_code = EXIT_ASK_FAILED

    def __init__(self, message: str, *, code: str = "", thread_uuid: str = "") -> None:
        self.code = code
        self.thread_uuid = thread_uuid
        super().__init__(message)


class AskRateLimitedError(AskError):
    """The stream carried a rate-limit or quota error code."""

    exit_code = EXIT_ASK_RATE_LIMITED


class AskFailedError(AskError):
    """The stream ended with ``status: FAILED`` or an error code other than a rate limit."""


class ClarifyingQuestionsError(AskError):
    """Deep research stopped and waits for answers to clarifying questions."""

    exit_code = EXIT_ASK_CLARIFYING

    def __init__(
        self, message: str, *, questions: tuple[str, ...] = (), thread_uuid: str = ""
    ) -> None:
        super().__init__(message, code="CLARIFYING_QUESTIONS", thread_uuid=thread_uuid)
        self.questions = questions


class AskSessionError(AskError):
    """HTTP 200 without a started thread: an expired session or a used-up quota."""

    exit_code = EXIT_ASK_SESSION


class AskTimeoutError(AskError):
    """No complete answer arrived within the ask's time limit."""

    exit_code = EXIT_ASK_TIMEOUT


class AskIncompleteError(AskError):
    """The stream closed before a COMPLETED frame or a final message."""

    exit_code = EXIT_ASK_INCOMPLETE


def exit_code_for(exc: BaseException) -> int:
    """Return the process exit code for an exception (1 for anything unexpected)."""
    if isinstance(exc, PplxError):
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_FAILURES
