"""The docs agree with the code: events, exit codes, every command's options, links.

Each check is driven by a table at the top of this module. A branch that adds a command, a
page, an event or an exit code adds one row here (or to the docs) and nothing else.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from pplx_archiver import errors
from pplx_archiver.cli import _register, app
from pplx_archiver.cli._help import program_name
from pplx_archiver.cli._run import demo_hints

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pplx_archiver"
DOCS = ROOT / "docs"

# Every leaf command → the docs page that describes it (and must name each of its options).
COMMAND_PAGES: dict[str, str] = {
    "batch": "docs/archiving.md",
    "sync": "docs/archiving.md",
    "export": "docs/archiving.md",
    "sync-deleted": "docs/archiving.md",
    "re-render": "docs/care.md",
    "status": "docs/care.md",
    "verify": "docs/care.md",
    "assets-backfill": "docs/care.md",
    "doctor": "docs/care.md",
    "spaces": "docs/archiving.md",
    "auth check": "docs/connecting.md",
    "auth save": "docs/connecting.md",
    "demo": "docs/dev/simulator.md",
    "sim serve": "docs/dev/simulator.md",
    "sim truth": "docs/dev/simulator.md",
    "reindex": "docs/unattended.md",
    "forget": "docs/unattended.md",
    "search": "docs/search.md",
    "site": "docs/site.md",
    "runs": "docs/scheduling.md",
    "failed": "docs/scheduling.md",
    "schedule install": "docs/scheduling.md",
    "schedule show": "docs/scheduling.md",
    "schedule remove": "docs/scheduling.md",
    "relations": "docs/relations.md",
    "usage-backfill": "docs/usage.md",
    "history": "docs/changes.md",
    "diff": "docs/changes.md",
    "alerts": "docs/changes.md",
    "audit models": "docs/changes.md",
    "mcp": "docs/mcp.md",
    "vault": "docs/vault.md",
}

# Options every command has that no page needs to repeat.
UNIVERSAL_OPTIONS = {"--help"}

# Events emitted in a way the scanner below cannot see (a name built at run time); none today.
EXTRA_EVENTS: set[str] = set()

# Names the scanner finds that are not events: an environment variable appended as a
# (name, value) pair to the environment of a scheduled unit.
NOT_EVENTS = {"PPLX_CONFIG_DIR"}

# Docs pages other parts of the project add; a link to one of them may dangle until it exists.
PLANNED_PAGES: set[str] = set()

EVENT_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
LOG_METHODS = {"debug", "info", "warning", "error", "critical", "exception"}
TYPE_PLACEHOLDER = re.compile(r"<(?:str|int|float|path|bool|list\[[^\]]*\])[^>]*>")


def _module_constants(tree: ast.Module) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Constant):
            continue
        if isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def emitted_events(root: Path = PACKAGE) -> dict[str, list[str]]:
    """Event names the code can emit, each with where: the first argument of a log call
    (``log.info("NAME", ...)``, a literal or a module constant) or the name of a render-core
    finding (``findings.append(("NAME", {...}))``)."""
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _module_constants(tree)

        def value(node: ast.expr, constants: dict[str, str] = constants) -> str | None:
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                return node.value
            if isinstance(node, ast.Name):
                return constants.get(node.id)
            return None

        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            func, first = node.func, node.args[0]
            if not isinstance(func, ast.Attribute):
                continue
            if func.attr in LOG_METHODS:
                name = value(first)
            elif func.attr == "append" and isinstance(first, ast.Tuple) and first.elts:
                name = value(first.elts[0])
            else:
                continue
            if name and EVENT_NAME.match(name):
                where = f"{path.relative_to(root)}:{node.lineno}"
                found.setdefault(name, []).append(where)
    return found


def documented_events() -> list[str]:
    """Event names of the rows of docs/events.md's tables (first cell, in backticks)."""
    text = (DOCS / "events.md").read_text(encoding="utf-8")
    return re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", text, flags=re.MULTILINE)


def test_every_emitted_event_is_documented_once() -> None:
    """Each event the code can emit has exactly one row in docs/events.md, and no row is stale."""
    emitted = (set(emitted_events()) | EXTRA_EVENTS) - NOT_EVENTS
    rows = documented_events()
    assert {"RUN_SUMMARY", "THREAD_ARCHIVED", "MODE_SWITCH"} <= emitted  # the scanner works
    duplicates = sorted({name for name in rows if rows.count(name) > 1})
    assert not duplicates, f"documented more than once: {duplicates}"
    assert sorted(emitted - set(rows)) == [], "emitted but not in docs/events.md"
    assert sorted(set(rows) - emitted) == [], "in docs/events.md but never emitted"


def test_event_scanner_sees_literals_constants_and_findings(tmp_path: Path) -> None:
    """The scanner finds a literal, a module constant and a core finding, and ignores others."""
    (tmp_path / "m.py").write_text(
        'DONE = "JOB_DONE"\n'
        "def f(log, findings):\n"
        '    log.info("JOB_STARTED", n=1)\n'
        "    log.warning(DONE)\n"
        '    findings.append(("ODD_THING", {}))\n'
        '    print("NOT_AN_EVENT")\n'
        '    log.info("lowercase")\n',
        encoding="utf-8",
    )
    assert set(emitted_events(tmp_path)) == {"JOB_STARTED", "JOB_DONE", "ODD_THING"}


def test_exit_codes_match_errors_module() -> None:
    """Every EXIT_* constant of errors.py is a row of docs/exit-codes.md (code and name)."""
    in_code = {
        name: value
        for name, value in vars(errors).items()
        if name.startswith("EXIT_") and isinstance(value, int)
    }
    text = (DOCS / "exit-codes.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| `(EXIT_[A-Z_]+)` \|", text, flags=re.MULTILINE)
    in_docs = {name: int(code) for code, name in rows}
    assert len(rows) == len(in_docs), "an exit code is documented twice"
    assert in_docs == in_code


def test_exit_code_of_each_error_class_is_documented() -> None:
    """Every exit code an error class carries is one of the documented codes."""
    documented = {value for name, value in vars(errors).items() if name.startswith("EXIT_")}

    def subclasses(cls: type[errors.PplxError]) -> Iterator[type[errors.PplxError]]:
        yield cls
        for sub in cls.__subclasses__():
            yield from subclasses(sub)

    codes = {cls.exit_code for cls in subclasses(errors.PplxError)}
    assert codes <= documented


def _command_tree() -> dict[str, Any]:
    _register()
    root = typer.main.get_command(app)
    leaves: dict[str, Any] = {}

    def walk(command: Any, prefix: str) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, f"{prefix}{name} ")
        else:
            leaves[prefix.strip()] = command

    walk(root, "")
    return leaves


def _long_options(command: Any) -> list[str]:
    names: list[str] = []
    for param in command.params:
        if getattr(param, "param_type_name", "") != "option":
            continue
        for opt in [*param.opts, *param.secondary_opts]:
            if opt.startswith("--") and opt not in UNIVERSAL_OPTIONS:
                names.append(opt)
    return names


def _help(command: str) -> str:
    result = CliRunner().invoke(app, [*command.split(), "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    return result.output


def test_every_command_has_a_docs_page() -> None:
    """Every command of the command line is in COMMAND_PAGES and no row names a gone command."""
    assert set(_command_tree()) == set(COMMAND_PAGES)


@pytest.mark.parametrize("command", sorted(COMMAND_PAGES))
def test_docs_page_names_every_option(command: str) -> None:
    """The command's page names the command and each of its long options (as `--name`)."""
    page = (ROOT / COMMAND_PAGES[command]).read_text(encoding="utf-8")
    leaf = _command_tree()[command]
    assert command.split()[-1] in page
    missing = [opt for opt in _long_options(leaf) if not re.search(rf"{opt}(?![\w-])", page)]
    assert missing == [], f"{COMMAND_PAGES[command]} does not mention {missing}"


@pytest.mark.parametrize("command", sorted(COMMAND_PAGES))
def test_help_explains_every_option_and_ends_with_examples(command: str) -> None:
    """`--help` describes every option, shows words not types, and ends its text with examples."""
    leaf = _command_tree()[command]
    undescribed = [
        param.opts[0]
        for param in leaf.params
        if getattr(param, "param_type_name", "") == "option" and not param.help
    ]
    assert undescribed == []
    text = _help(command)
    options = text.split("Options:", 1)[1]
    assert not TYPE_PLACEHOLDER.search(options), options
    assert "--no-no-" not in text
    doc = leaf.help or ""
    tail = doc.rstrip().split("Examples:")
    assert len(tail) == 2, f"{command}: no Examples block"
    examples = [line.strip() for line in tail[1].splitlines() if line.strip()]
    assert 1 <= len(examples) <= 3
    assert all(line.startswith(f"pplx-export {command}") for line in examples), examples


@pytest.mark.parametrize("command", sorted(COMMAND_PAGES))
def test_archive_option_is_dash_o_out(command: str) -> None:
    """A command that takes the archive folder spells it `-o/--out`."""
    for param in _command_tree()[command].params:
        if "--out" in getattr(param, "opts", ()):
            assert "-o" in param.opts


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]


def test_relative_links_resolve() -> None:
    """Every relative link of the README and the docs points at a file of the repository."""
    broken = []
    for md in _markdown_files():
        text = re.sub(r"```.*?```", "", md.read_text(encoding="utf-8"), flags=re.DOTALL)
        text = re.sub(r"`[^`\n]*`", "", text)
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            resolved = (md.parent / target).resolve()
            rel = resolved.relative_to(ROOT).as_posix() if resolved.is_relative_to(ROOT) else ""
            if not resolved.exists() and rel not in PLANNED_PAGES:
                broken.append(f"{md.relative_to(ROOT)} → {target}")
    assert broken == []


def test_nothing_points_outside_the_repository() -> None:
    """No source, test or doc cites the design notes kept outside the repository."""
    pattern = re.compile(r"\bAPI\.md|\bDESIGN\.md|\.\./shared\b")
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *_markdown_files()]
    this = Path(__file__).resolve()
    hits = [
        str(f.relative_to(ROOT))
        for f in files
        if f.resolve() != this and pattern.search(f.read_text(encoding="utf-8"))
    ]
    assert hits == []


def test_readme_stays_short() -> None:
    """The README is an introduction of at most about 250 lines; the reference is in docs/."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250


def test_demo_hints_name_a_program_that_exists() -> None:
    """The hints after the demo use a program name a fresh shell can run."""
    venv = ".venv/bin/pplx-export"
    assert program_name(venv, None, "/usr/bin/python3") == venv
    assert program_name(venv, str(Path(venv).resolve()), "/usr/bin/python3") == "pplx-export"
    assert program_name("/x/pplx_archiver/__main__.py", None, "/v/bin/python") == (
        "/v/bin/python -m pplx_archiver"
    )
    assert program_name("/odd dir/pplx-export", None, "py") == "'/odd dir/pplx-export'"


def test_demo_hint_commands_parse(tmp_path: Path) -> None:
    """Every pplx-export command the demo suggests names options its command has."""
    program = "pplx-export"
    hints = demo_hints(tmp_path / "demo archive", program)
    commands = [
        line.strip()[len(program) + 1 :] for line in hints if line.strip().startswith(program)
    ]
    assert len(commands) >= 3
    _register()
    for line in commands:
        args = shlex.split(line.split("#")[0])
        result = CliRunner().invoke(app, [*args, "--help"])
        assert result.exit_code == 0, (line, result.output)


def test_benchmark_page_shows_the_latest_results() -> None:
    """docs/dev/benchmarks.md holds the table bench_table.py makes of bench/results.json."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("bench_table", ROOT / "scripts/bench_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = json.loads((ROOT / "bench/results.json").read_text(encoding="utf-8"))
    page = (DOCS / "dev/benchmarks.md").read_text(encoding="utf-8")
    assert module.table(report).strip() in page
