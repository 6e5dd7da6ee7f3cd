"""Options shared by several commands: where the API is and how the session is supplied."""

from __future__ import annotations

import typer

BASE_URL = typer.Option(
    None,
    "--base-url",
    metavar="URL",
    help="API origin (default https://www.perplexity.ai; env PPLX_BASE_URL).",
)
COOKIES = typer.Option(
    None,
    "--cookies",
    metavar="FILE",
    help="Netscape cookies.txt or a JSON cookie export holding your session.",
)
TOKEN = typer.Option(
    None,
    "--session-token",
    metavar="TOKEN",
    help="The __Secure-next-auth.session-token value, or a copied Cookie header "
    "(env PPLX_SESSION_TOKEN).",
)
COOKIES_FROM = typer.Option(
    None,
    "--cookies-from",
    metavar="BROWSER",
    help="Read cookies from a browser: chrome, chromium, firefox, edge, brave, opera, vivaldi "
    "or safari (needs browser-cookie3).",
)
IMPERSONATE = typer.Option(
    None,
    "--impersonate",
    metavar="BROWSER",
    help="Send requests with a browser TLS fingerprint (needs curl_cffi).",
)
LOG_FORMAT = typer.Option(
    None,
    "--log-format",
    metavar="[auto|json|console]",
    help="stderr log format; auto = console lines on a terminal, JSON otherwise [default: auto].",
)
ACCOUNT = typer.Option(
    None,
    "--account",
    metavar="NAME",
    help="Only this account (repeatable): a name given to `auth save --account`, or an "
    "account id of a multi-account cookie export [default: every account].",
)
