"""Schedule text: systemd units and crontab lines quote every path and keep other entries."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pplx_archiver.core.schedules import schedule as text
from pplx_archiver.errors import ConfigError

ECHO = (sys.executable, "-c", "import json, sys; print(json.dumps(sys.argv[1:]))")


def _spec(**kw: object) -> text.ScheduleSpec:
    base: dict[str, object] = {
        "name": "pplx-export",
        "program": ("/opt/pplx/bin/pplx-export",),
        "archive": "/home/me/my archive",
    }
    base.update(kw)
    return text.ScheduleSpec(**base)  # type: ignore[arg-type]


def test_timer_has_persistent_randomized_delay_and_calendar() -> None:
    """The timer catches up missed runs, spreads its start and names its service."""
    timer = text.timer_text(_spec(on_calendar="*-*-* 03:00", randomized_delay="30min"))
    lines = timer.splitlines()
    assert "Persistent=true" in lines
    assert "RandomizedDelaySec=30min" in lines
    assert "OnCalendar=*-*-* 03:00" in lines
    assert "Unit=pplx-export.service" in lines and "WantedBy=timers.target" in lines


def test_service_quotes_paths_for_systemd() -> None:
    """ExecStart double-quotes each argument and doubles % and $ (systemd specifiers)."""
    spec = _spec(archive='/data/50% "off" $HOME', args=("--healthcheck", "https://h/x"))
    service = text.service_text(spec)
    exec_line = next(line for line in service.splitlines() if line.startswith("ExecStart="))
    assert exec_line == (
        'ExecStart="/opt/pplx/bin/pplx-export" "sync" "--out" '
        '"/data/50%% \\"off\\" $$HOME" "--healthcheck" "https://h/x"'
    )
    assert "Type=oneshot" in service.splitlines()
    assert text.archive_of_unit(service) == '/data/50% "off" $HOME'


def test_cron_line_runs_the_exact_argv_through_sh() -> None:
    """After cron's % handling, /bin/sh receives exactly the scheduled arguments."""
    archive = "/tmp/it's 100% $(reboot) `x` a\\b"
    spec = _spec(program=ECHO, archive=archive, args=("--json",), cron_time="5 4 * * *")
    line = text.cron_line(spec)
    assert line.startswith("5 4 * * * ") and line.endswith("# pplx-export-schedule:pplx-export")
    command = line.split(" ", 5)[5].replace("\\%", "%")  # what cron hands to the shell
    done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == ["sync", "--out", archive, "--json"]
    assert text.archive_of_cron_line(line) == archive


def test_crontab_edits_touch_only_this_schedule() -> None:
    """Installing replaces this schedule's entry, removing drops it; other lines stay."""
    others = "MAILTO=me\n0 1 * * * /bin/backup # pplx-export-schedule:other\n"
    first = text.cron_line(_spec(cron_time="1 2 * * *"))
    second = text.cron_line(_spec(cron_time="3 4 * * *"))
    once = text.crontab_with(others, first, "pplx-export")
    twice = text.crontab_with(once, second, "pplx-export")
    assert twice == others + second + "\n"
    assert text.find_cron_line(twice, "pplx-export") == second
    assert text.crontab_without(twice, "pplx-export") == others
    assert text.find_cron_line(others, "pplx-export") is None


def test_default_cron_time_is_fixed_per_archive() -> None:
    """Each archive gets the same early-morning time on every install."""
    when = text.default_cron_time("/home/me/a")
    assert when == text.default_cron_time("/home/me/a")
    minute, hour, *rest = when.split()
    assert 0 <= int(minute) < 60 and 2 <= int(hour) <= 5 and rest == ["*", "*", "*"]


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"archive": "/a\nExecStartPre=/bin/evil"}, "control characters"),
        ({"archive": "relative/path"}, "not absolute"),
        ({"name": "../x"}, "not a unit name"),
        ({"randomized_delay": "soon"}, "not a time span"),
        ({"cron_time": "every day"}, "not a crontab time"),
        ({"args": ("--x", "a\rb")}, "control characters"),
    ],
)
def test_unsafe_specs_are_refused(kw: dict[str, object], message: str) -> None:
    """A value that would break out of its line or directive is refused with a clear error."""
    with pytest.raises(ConfigError, match=message):
        text.check_spec(_spec(**kw))


def test_backslash_before_percent_is_refused_for_cron() -> None:
    """cron would read a backslash before % as its escape: such an argument is refused."""
    with pytest.raises(ConfigError, match="backslash before %"):
        text.cron_line(_spec(archive="/a\\%b"))
