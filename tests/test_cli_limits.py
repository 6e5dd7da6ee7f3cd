"""Every number a user can give is bounded (issue 40): each numeric option of every command of
both programs, swept with 0, -1, a huge value, ``nan`` and ``inf``, is refused in one line
(exit 2, the option and its range named, no traceback) unless the value is declared valid
below; the config file's and the environment's numbers are held to the same table."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.core import TyperCommand
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.cli.ask import ask_app
from pplx_archiver.errors import ConfigError
from pplx_archiver.limits import BOUNDS, MAX_JOBS, SETTING_FIELDS
from pplx_archiver.settings import load_settings

SWEEP = ("0", "-1", "1000000000000000", "nan", "inf")

# (command, option) → the values of SWEEP that are valid for it; every other one is refused.
VALID: dict[tuple[str, str], set[str]] = {
    ("batch", "--early-stop"): {"0"},
    ("sync", "--early-stop"): {"0"},
    ("demo", "--seed"): {"0"},
    ("sim serve", "--port"): {"0"},
    ("sim serve", "--threads"): {"0"},
    ("sim serve", "--seed"): {"0"},
    ("sim serve", "--fault-seed"): {"0"},
    ("sim serve", "--latency-ms"): {"0"},
    ("sim serve", "--jitter-ms"): {"0"},
    ("sim serve", "--rate"): {"0"},
    ("sim serve", "--fault-rate"): {"0"},
    ("sim serve", "--deleted-rate"): {"0"},
    ("sim serve", "--expired-rate"): {"0"},
    ("sim serve", "--vanish-rate"): {"0"},
    ("sim serve", "--challenge-after-429s"): {"0"},
    ("sim serve", "--rotate-session-every"): {"0"},
    ("sim serve", "--transient-404"): {"0"},
    ("sim serve", "--ask-delay-ms"): {"0"},
    ("sim truth", "--threads"): {"0"},
    ("sim truth", "--seed"): {"0"},
}

# Arguments a command needs before its options are looked at.
ARGS: dict[str, list[str]] = {"export": ["some-thread"], "search": ["words"], "ask": ["q"]}


class _Ran(Exception):
    """Raised instead of running a command whose options were all accepted."""


def _leaves(command: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    subs = getattr(command, "commands", None)
    if subs:
        for name, sub in subs.items():
            yield from _leaves(sub, f"{prefix}{name} ")
    else:
        yield prefix.strip(), command


def _numeric_options() -> list[tuple[str, str, str]]:
    _register()
    found = []
    for program, root in (("pplx-export", app), ("pplx-ask", ask_app)):
        for name, leaf in _leaves(typer.main.get_command(root)):
            for param in leaf.params:
                annotation = getattr(param.type_descriptor, "annotation", None)
                if param.param_type_name == "option" and annotation in (int, float):
                    found.append((program, name, param.opts[0]))
    return found


NUMERIC = _numeric_options()


def test_sweep_finds_the_options() -> None:
    """The discovery sees the options the issue names, on both programs."""
    names = {(command, option) for _, command, option in NUMERIC}
    assert {("verify", "--jobs"), ("batch", "--concurrency"), ("batch", "--rate")} <= names
    assert {("sim serve", "--port"), ("sim truth", "--threads"), ("ask", "--timeout")} <= names
    assert set(VALID) <= names


_COMMANDS: dict[int, Any] = {}


def _command_built_once(root: typer.Typer) -> Any:
    """The click command of ``root``, built on the first call only: typer's CliRunner builds
    the whole command tree on every invoke (25 ms untraced), the sweep below invokes ~840
    times, and a built command is the same on every call."""
    if id(root) not in _COMMANDS:
        _COMMANDS[id(root)] = typer.main.get_command(root)
    return _COMMANDS[id(root)]


@pytest.mark.parametrize(("program", "command", "option"), NUMERIC)
def test_every_numeric_option_is_bounded(
    program: str, command: str, option: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out-of-range values are one `error:` line naming the option and its range, exit 2."""

    def refuse_to_run(self: Any, ctx: Any) -> Any:
        raise _Ran(f"{command} {option} accepted a value")

    monkeypatch.setattr(TyperCommand, "invoke", refuse_to_run)
    monkeypatch.setattr(typer.testing, "_get_command", _command_built_once)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PPLX_CONFIG_DIR", str(tmp_path / "config"))
    root = app if program == "pplx-export" else ask_app
    for value in SWEEP:
        if value in VALID.get((command, option), set()):
            continue
        args = [*command.split(), *ARGS.get(command, []), f"{option}={value}"]
        result = CliRunner().invoke(root, args)
        assert not isinstance(result.exception, _Ran), f"{args} was accepted"
        assert result.exit_code == 2, (args, result.output)
        lines = result.stderr.splitlines()
        assert len(lines) == 1, (args, result.stderr)
        assert lines[0].startswith(f"error: {option} must be a"), lines[0]
        assert " from " in lines[0] and " to " in lines[0], lines[0]
        assert "Traceback" not in result.output


def test_jobs_are_a_small_multiple_of_the_cores() -> None:
    """Process pools are bounded by 4 × the cores, and never more than 64."""
    assert 1 <= MAX_JOBS <= 64
    assert BOUNDS["jobs"].high == MAX_JOBS


@pytest.mark.parametrize("name", SETTING_FIELDS)
def test_config_file_numbers_are_bounded(name: str, tmp_path: Path) -> None:
    """Each numeric setting of the config file and the environment is held to the same row."""
    config = tmp_path / "config.toml"
    bound = BOUNDS[name]
    for value in ("0", "-1", "1000000000000000", "nan", "inf"):
        parsed = float(value)
        if math.isfinite(parsed) and bound.low <= parsed <= bound.high:
            continue  # 0 where 0 is allowed (early_stop)
        config.write_text(f"{name} = {value}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=rf"config\.toml: .*{name}"):
            load_settings(env={"PPLX_CONFIG": str(config)})


def test_environment_numbers_are_bounded(tmp_path: Path) -> None:
    """A variable beyond its maximum is refused, naming the variable."""
    env = {"PPLX_CONFIG_DIR": str(tmp_path), "PPLX_ASSET_CONCURRENCY": "100000"}
    with pytest.raises(ConfigError, match="PPLX_ASSET_CONCURRENCY: asset_concurrency must be"):
        load_settings(env=env)


def test_configuration_page_lists_every_bounded_option() -> None:
    """docs/configuration.md's table of maxima names every numeric option and setting."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text("utf-8")
    limits = page.split("## Limits", 1)[1]
    missing = sorted(
        {option for _, _, option in NUMERIC if not re.search(rf"{option}(?![\w-])", limits)}
    )
    missing += [name for name in SETTING_FIELDS if f"`{name}`" not in limits]
    assert missing == []
