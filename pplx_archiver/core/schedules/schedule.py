"""Text of a schedule: systemd user service + timer, or one crontab line. Pure.

Everything here turns a :class:`ScheduleSpec` (absolute program path, archive path, the
command and its options, when to run) into file text, and reads such text back; the shell
writes the files and calls ``systemctl`` / ``crontab``. Arguments are quoted for their reader
(systemd's ExecStart rules, ``/bin/sh`` for cron), so paths with spaces, quotes, ``%`` or
``$`` run as written; arguments holding control characters (a newline would end the line and
start a new directive or crontab entry) are refused.

A health-check URL holds its check's secret key: :func:`mask_url` and :func:`mask_secrets`
give what may be shown of it (``https://hc-ping.com/…d1f2``); only the files hold it whole.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shlex
from urllib.parse import urlsplit

from pplx_archiver.errors import ConfigError

MARKER = "# pplx-export-schedule:"
ARCHIVE_COMMENT = "# pplx-export archive: "
HEADER = "# Written by `pplx-export schedule install`; remove with `pplx-export schedule remove`."

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_TIMESPAN = re.compile(r"^\d+\s*[a-z]*(\s+\d+\s*[a-z]*)*$")
_CRON_FIELD = re.compile(r"^[0-9A-Za-z*,/-]+$")
_CRON_NICKNAMES = ("@hourly", "@daily", "@weekly", "@monthly", "@yearly", "@annually")
# Options whose value is a secret, and their value in a command line, a unit or a crontab
# line: ``--healthcheck URL``, ``"--healthcheck" "URL"``, ``--healthcheck=URL``.
SECRET_OPTIONS = ("--healthcheck",)
_SECRET_ARG = re.compile(r"""(--healthcheck(?:=|["']?\s+["']?))([^\s"']+)""")
# A URL's secret part shorter than this shows no characters at all.
_MIN_SHOWN_TAIL = 12


def mask_url(url: str) -> str:
    """What may be shown of a secret URL: scheme, host, an ellipsis and the last 4 characters
    (``https://hc-ping.com/…d1f2``); ``…`` alone when it is no URL."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.hostname:
        return "…"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    secret = url.split(parts.netloc, 1)[1].rstrip("/")
    tail = secret[-4:] if len(secret) >= _MIN_SHOWN_TAIL else ""
    return f"{parts.scheme}://{parts.hostname}{port}/…{tail}"


def mask_secrets(text: str) -> str:
    """``text`` with the value of every secret option masked by :func:`mask_url` (a value
    masked already is left as it is)."""

    def one(match: re.Match[str]) -> str:
        value = match.group(2)
        return match.group(0) if "…" in value else match.group(1) + mask_url(value)

    return _SECRET_ARG.sub(one, text)


@dataclasses.dataclass(frozen=True, slots=True)
class ScheduleSpec:
    """One scheduled command: what runs (absolute paths) and when."""

    name: str
    program: tuple[str, ...]
    archive: str
    command: str = "sync"
    args: tuple[str, ...] = ()
    on_calendar: str = "daily"
    randomized_delay: str = "1h"
    cron_time: str = ""
    environment: tuple[tuple[str, str], ...] = ()

    def argv(self) -> list[str]:
        """The command line the schedule runs."""
        return [*self.program, self.command, "--out", self.archive, *self.args]


def check_text(value: str, what: str) -> str:
    """``value`` when it holds no control character; else a ConfigError naming ``what``."""
    if any(ord(c) < 32 or ord(c) == 127 or c in "\u2028\u2029\x85" for c in value):
        raise ConfigError(f"{what}: control characters are not allowed in {value!r}")
    return value


def check_spec(spec: ScheduleSpec) -> ScheduleSpec:
    """The spec when every part can be written safely; else a ConfigError saying which."""
    if not _NAME.match(spec.name):
        raise ConfigError(
            f"--name: {spec.name!r} is not a unit name (letters, digits, '_', '.', '-')"
        )
    for arg in spec.argv():
        check_text(arg, "schedule command line")
    if not spec.program or not spec.program[0].startswith("/"):
        raise ConfigError(f"program path {spec.program[:1]!r} is not absolute")
    if not spec.archive.startswith("/"):
        raise ConfigError(f"--out: archive path {spec.archive!r} is not absolute")
    check_text(spec.on_calendar, "--on-calendar")
    if not spec.on_calendar.strip():
        raise ConfigError("--on-calendar: empty calendar expression")
    if not _TIMESPAN.match(spec.randomized_delay.strip()):
        raise ConfigError(
            f"--randomized-delay: {spec.randomized_delay!r} is not a time span (e.g. 30min, 1h)"
        )
    if spec.cron_time:
        check_cron_time(spec.cron_time)
    for key, value in spec.environment:
        if not re.match(r"^[A-Z_][A-Z0-9_]*$", key):
            raise ConfigError(f"environment variable name {key!r} is not valid")
        check_text(value, f"environment variable {key}")
    return spec


def check_cron_time(value: str) -> str:
    """A crontab time: five fields or a nickname such as ``@daily``; else a ConfigError."""
    check_text(value, "--cron-time")
    fields = value.split()
    if len(fields) == 1 and fields[0] in _CRON_NICKNAMES:
        return value
    if len(fields) != 5 or not all(_CRON_FIELD.match(f) for f in fields):
        raise ConfigError(
            f"--cron-time: {value!r} is not a crontab time (five fields such as '17 3 * * *')"
        )
    return value


def default_cron_time(archive: str) -> str:
    """A daily time between 02:00 and 05:59, fixed per archive, so archives spread out."""
    digest = hashlib.sha256(archive.encode("utf-8")).digest()
    return f"{digest[0] % 60} {2 + digest[1] % 4} * * *"


# -- systemd ------------------------------------------------------------------------------


def systemd_escape(value: str) -> str:
    """``value`` with systemd specifiers (``%``) escaped, for a directive's free text."""
    return value.replace("%", "%%")


def systemd_quote(arg: str) -> str:
    """One ExecStart argument: double-quoted, ``\\`` ``"`` escaped, ``%`` and ``$`` doubled."""
    inner = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{inner}"'


def unit_names(name: str) -> tuple[str, str]:
    """The service and timer file names of a schedule."""
    return f"{name}.service", f"{name}.timer"


def service_text(spec: ScheduleSpec) -> str:
    """The systemd user service that runs the command once."""
    lines = [
        HEADER,
        ARCHIVE_COMMENT + spec.archive,
        "[Unit]",
        f"Description=pplx-export {spec.command} of {systemd_escape(spec.archive)}",
        "Wants=network-online.target",
        "After=network-online.target",
        "",
        "[Service]",
        "Type=oneshot",
    ]
    for key, value in spec.environment:
        lines.append("Environment=" + systemd_quote(f"{key}={value}"))
    lines += [
        "ExecStart=" + " ".join(systemd_quote(a) for a in spec.argv()),
        "Nice=10",
        "IOSchedulingClass=idle",
        "",
    ]
    return "\n".join(lines)


def timer_text(spec: ScheduleSpec) -> str:
    """The systemd user timer: calendar, randomized delay, catch-up after downtime."""
    service, _ = unit_names(spec.name)
    return "\n".join(
        [
            HEADER,
            ARCHIVE_COMMENT + spec.archive,
            "[Unit]",
            f"Description=Scheduled pplx-export {spec.command} of {systemd_escape(spec.archive)}",
            "",
            "[Timer]",
            f"OnCalendar={spec.on_calendar}",
            f"RandomizedDelaySec={spec.randomized_delay.strip()}",
            "Persistent=true",
            f"Unit={service}",
            "",
            "[Install]",
            "WantedBy=timers.target",
            "",
        ]
    )


def archive_of_unit(text: str) -> str | None:
    """The archive path a unit written by :func:`service_text` / :func:`timer_text` names."""
    for line in text.splitlines():
        if line.startswith(ARCHIVE_COMMENT):
            return line[len(ARCHIVE_COMMENT) :]
    return None


# -- cron ---------------------------------------------------------------------------------


def cron_quote(arg: str) -> str:
    """One argument for the ``/bin/sh`` of a crontab line, with ``%`` escaped for cron."""
    if "\\%" in arg:  # cron would read the backslash as its own escape
        raise ConfigError(f"crontab: cannot write {arg!r} (a backslash before %)")
    return shlex.quote(arg).replace("%", "\\%")


def cron_line(spec: ScheduleSpec) -> str:
    """The crontab entry: time, environment, quoted command line, and the schedule's marker."""
    when = spec.cron_time or default_cron_time(spec.archive)
    env = [f"{key}={cron_quote(value)}" for key, value in spec.environment]
    command = " ".join([*env, *(cron_quote(a) for a in spec.argv())])
    return f"{when} {command} {MARKER}{spec.name}"


def _is_ours(line: str, name: str) -> bool:
    return line.rstrip().endswith(f"{MARKER}{name}") and not line.lstrip().startswith("#")


def find_cron_line(crontab: str, name: str) -> str | None:
    """The entry of schedule ``name`` in a crontab, if it has one."""
    for line in crontab.splitlines():
        if _is_ours(line, name):
            return line
    return None


def crontab_with(crontab: str, line: str, name: str) -> str:
    """The crontab with schedule ``name``'s entry set to ``line`` (replaced, else appended)."""
    lines = [entry for entry in crontab.splitlines() if not _is_ours(entry, name)]
    lines.append(line)
    return "\n".join(lines) + "\n"


def crontab_without(crontab: str, name: str) -> str:
    """The crontab without schedule ``name``'s entry; every other line unchanged."""
    lines = [entry for entry in crontab.splitlines() if not _is_ours(entry, name)]
    return "\n".join(lines) + "\n" if lines else ""


def archive_of_cron_line(line: str) -> str | None:
    """The ``--out`` path of an entry written by :func:`cron_line`."""
    body = line.rsplit(MARKER, 1)[0].replace("\\%", "%")
    try:
        words = shlex.split(body)
    except ValueError:
        return None
    for i, word in enumerate(words[:-1]):
        if word == "--out":
            return words[i + 1]
    return None
