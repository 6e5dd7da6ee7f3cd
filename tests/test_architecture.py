"""The render core stays pure: no module under core/ imports I/O, clock or async libraries."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parent.parent / "pplx_archiver" / "core"
FORBIDDEN = {
    "httpx",
    "anyio",
    "asyncio",
    "aiofiles",
    "structlog",
    "os",
    "time",
    "pathlib",
    "socket",
    "subprocess",
    "shutil",
    "tempfile",
    "sqlite3",
    "threading",
    "random",
    "datetime_now",
}


def _imported_roots(source: str) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
            if node.module.startswith("pplx_archiver.") and node.module.split(".")[1] in {
                "shell",
                "sim",
                "cli",
                "logconfig",
                "settings",
            }:
                roots.add(node.module)
    return roots


def _core_modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def test_core_exists() -> None:
    """The core package is present, so the purity check below checks something."""
    assert (CORE / "__init__.py").exists()


@pytest.mark.parametrize("path", _core_modules(), ids=lambda p: p.relative_to(CORE).as_posix())
def test_core_module_is_pure(path: Path) -> None:
    """A core module imports none of the I/O libraries nor the shell, simulator or CLI."""
    roots = _imported_roots(path.read_text(encoding="utf-8"))
    bad = {r for r in roots if r in FORBIDDEN or r.startswith("pplx_archiver.")}
    assert not bad, f"{path.relative_to(CORE)} imports {sorted(bad)}"


def test_checker_catches_a_forbidden_import() -> None:
    """The import scanner itself sees plain, dotted and from-imports."""
    src = (
        "import os\nfrom time import monotonic\nimport httpx.x\nfrom pplx_archiver.shell import s\n"
    )
    roots = _imported_roots(src)
    assert {"os", "time", "httpx", "pplx_archiver.shell"} <= roots


# --- The layout: the shell in sub-packages, no shell → simulator imports, no I/O in the core ---

PACKAGE = CORE.parent
SHELL = PACKAGE / "shell"
SHELL_PARTS = {"net", "archive", "run", "care", "ask", "writer", "timers"}
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
# Modules and functions over the limits, each with its reason. The list only shrinks.
OVERSIZE_MODULES: dict[str, str] = {}
LONG_FUNCTIONS: dict[str, str] = {}


def _all_imports(source: str) -> set[str]:
    """Every absolute module an import statement names, at any depth (function-local too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def test_shell_is_sub_packages() -> None:
    """shell/ holds only its parts; each is a package."""
    loose = sorted(p.name for p in SHELL.glob("*.py") if p.name != "__init__.py")
    assert not loose, f"modules directly under shell/: {loose}"
    parts = {p.name for p in SHELL.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert parts == SHELL_PARTS


@pytest.mark.parametrize("path", sorted(SHELL.rglob("*.py")), ids=_rel)
def test_shell_never_imports_the_simulator(path: Path) -> None:
    """The archiver's shell works against the real service; the simulator is a test and demo aid."""
    names = _all_imports(path.read_text(encoding="utf-8"))
    bad = sorted(n for n in names if n == "pplx_archiver.sim" or n.startswith("pplx_archiver.sim."))
    assert not bad, f"{_rel(path)} imports {bad}"


CORE_IO_MODULES = {"logging", "sys", "io", "builtins", "fcntl", "signal"}
CORE_IO_CALLS = {"open", "print", "input", "__import__"}


def _core_io(source: str) -> set[str]:
    found = {n.split(".")[0] for n in _all_imports(source)} & CORE_IO_MODULES
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in CORE_IO_CALLS
        ):
            found.add(f"{node.func.id}()")
    return found


@pytest.mark.parametrize("path", _core_modules(), ids=lambda p: p.relative_to(CORE).as_posix())
def test_core_does_no_io(path: Path) -> None:
    """No logging, sys, open(), print() in the core: events and files are data it returns."""
    bad = _core_io(path.read_text(encoding="utf-8"))
    assert not bad, f"{path.relative_to(CORE)} uses {sorted(bad)}"


def test_io_checker_catches_calls_and_imports() -> None:
    src = "import logging\nfrom sys import argv\ndef f():\n    print(open('x').read())\n"
    assert _core_io(src) == {"logging", "sys", "open()", "print()"}


def _sized_modules() -> list[Path]:
    return sorted([*SHELL.rglob("*.py"), *CORE.rglob("*.py")])


def _long_functions(path: Path) -> dict[str, int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                out[f"{_rel(path)}::{node.name}"] = length
    return out


@pytest.mark.parametrize("path", _sized_modules(), ids=_rel)
def test_module_and_function_sizes(path: Path) -> None:
    """Shell and core modules stay under ~400 lines and functions under ~60, unless listed."""
    rel = _rel(path)
    lines = path.read_text(encoding="utf-8").count("\n")
    if rel not in OVERSIZE_MODULES:
        assert lines <= MAX_MODULE_LINES, f"{rel} has {lines} lines (limit {MAX_MODULE_LINES})"
    long = {k: v for k, v in _long_functions(path).items() if k not in LONG_FUNCTIONS}
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_size_exceptions_are_still_needed() -> None:
    """An exception that is no longer needed is removed from the list (the list only shrinks)."""
    stale = [
        m for m in OVERSIZE_MODULES if (PACKAGE / m).read_text().count("\n") <= MAX_MODULE_LINES
    ]
    long_now: dict[str, int] = {}
    for path in _sized_modules():
        long_now.update(_long_functions(path))
    stale += [f for f in LONG_FUNCTIONS if f not in long_now]
    assert not stale, f"no longer oversize, remove from the lists: {stale}"


# --- One writer: only the archive's writer writes files or the index, in the whole package ---

# The one writer: ArchiveWriter (writer.py) and the modules it applies plans with. Nothing
# else writes a file, opens a write connection or executes a write statement.
WRITER_MODULES = {
    "shell/archive/writer.py": "ArchiveWriter.apply(plan): the one door for every write",
    "shell/archive/writer_rows.py": "the writer's index-row plans (runs, states, usage, …)",
    "shell/archive/writer_files.py": "the writer's site files and run logs",
    "shell/archive/writer_rebuild.py": "the writer's index rebuild (reindex's IndexRebuild)",
    "shell/archive/disk.py": "the writer's file operations (ArchiveWriter calls them)",
    "shell/archive/fsutil.py": "the atomic write and sync primitives the writer's Disk uses",
    "shell/archive/terminal_log.py": "the terminal-state log the writer appends to",
    "shell/archive/registry.py": "the variant registry's log (ArchiveWriter.apply(VariantRecords))",
    "shell/archive/index.py": "the writer's database layer: the index connection and its rows",
    "shell/archive/index_schema.py": "the writer's database layer: the schema and migrations",
    "shell/archive/index_modes.py": "the writer's database layer: the mode_memos table",
    "shell/archive/index_verify.py": "the writer's database layer: the verify_rotation row",
    "shell/archive/alerts.py": "the writer's database layer: the alerts table (Findings)",
    "shell/archive/search_index.py": "the writer's database layer: the search tables",
    "shell/archive/search_rebuild.py": "ArchiveWriter.apply(SearchRebuild)",
}
# Writes that are not archive content, each with where it writes and why it is not a plan.
WRITES_ELSEWHERE = {
    "shell/archive/lock.py": "the writer lock file index/write.lock (opened to be locked; "
    "holds the pid)",
    "shell/archive/terminal_log.py": "appends to index/terminal_states.jsonl, the log of "
    "terminal states beside the index (for reindex), when the store records one",
    "shell/net/auth.py": "the session file in the user's config folder, not the archive",
    "shell/net/download.py": "streams a CDN download into index/staging; the writer moves "
    "complete files into the thread folder",
    "shell/ask/ask_models.py": "the model list cache under index/config (a cache, not archive "
    "content)",
    "shell/run/monitor.py": "the --metrics-file textfile, outside the archive",
    "shell/run/accounts.py": "index/accounts.json, the run state of each account's last listing "
    "(like the lock file, not archive content)",
    "shell/timers/schedule.py": "the systemd/launchd schedule units in the user's config folder",
    "shell/care/vault_files.py": "the notes vault given to `vault --to`, a folder outside the "
    "archive (a --to inside it is refused; each path is checked again before it is written)",
    "shell/writer/writer_child.py": "the writer child's answers on its stdout pipe; the archive "
    "is written by the Archive (and its writer) the child opens",
    "shell/care/doctor.py": "an in-memory SQLite database (probes the FTS5 support)",
    "shell/care/verify_index.py": "a private temporary copy of the index (the integrity check "
    "of a read-only archive)",
    "cli/changes.py": "`history --to`: one version rendered into a folder outside the archive "
    "(a --to inside it is refused)",
}
# The simulator keeps its own state (a test and demo aid, never an archive).
NOT_SCANNED = ("sim/",)
WRITE_FUNCTIONS = {"write_atomic", "sync_filesystem", "makedirs", "copyfile", "copy2", "copytree"}
WRITE_METHODS = {
    "write_bytes", "write_text", "unlink", "rmdir", "rename", "rmtree", "symlink_to", "mkdir",
    "touch", "move", "copy", "copyfile", "copytree", "hardlink_to",
}  # fmt: skip
WRITE_MODES = set("wax+")
SQL_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER", "VACUUM")
# The index's write methods: called by the writer's modules only (others send a plan).
INDEX_WRITES = {
    "upsert", "transaction", "_tx", "put_variants", "put_mode_memos", "record_run_outcome",
    "mark_done", "mark_done_many", "rekey", "index_thread", "rewrite",
}  # fmt: skip


def _mode_writes(call: ast.Call, position: int) -> bool:
    """True when a call's mode argument (keyword or at ``position``) opens for writing."""
    mode: ast.expr | None = None
    for kw in call.keywords:
        if kw.arg == "mode":
            mode = kw.value
    if mode is None and len(call.args) > position:
        mode = call.args[position]
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return bool(set(mode.value) & WRITE_MODES)
    return True  # a computed mode may write


def _names(func: ast.expr) -> tuple[str | None, str | None, str | None]:
    """A call's plain name, attribute name and the name the attribute hangs on."""
    name = func.id if isinstance(func, ast.Name) else None
    attr = func.attr if isinstance(func, ast.Attribute) else None
    owner = (
        func.value.id
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
        else None
    )
    return name, attr, owner


def _file_write(node: ast.Call) -> str | None:
    """The kind of file write a call makes (as ``name()``), or None."""
    name, attr, owner = _names(node.func)
    if name in WRITE_FUNCTIONS or attr in WRITE_FUNCTIONS:
        return f"{name or attr}()"
    if name == "open" and _mode_writes(node, 1):
        return "open(write)"
    if attr == "open" and owner not in {"anyio", "os"} and _mode_writes(node, 0):
        return ".open(write)"
    if attr in {"open_file"} and _mode_writes(node, 1):
        return "open_file(write)"
    if attr == "fdopen" and _mode_writes(node, 1):
        return "fdopen(write)"
    if owner == "os" and attr in {"replace", "rename", "remove", "unlink", "open"}:
        if attr != "open" or len(node.args) < 2 or not _os_read_only(node.args[1]):
            return f"os.{attr}()"
        return None
    if owner == "shutil" and attr is not None and attr not in {"which", "disk_usage"}:
        return f"shutil.{attr}()"
    if attr in WRITE_METHODS and owner not in {"dataclasses", "shutil"}:
        return f".{attr}()"
    if attr == "replace" and owner != "dataclasses" and len(node.args) == 1:
        return ".replace(path)"  # str.replace takes two arguments
    return None


def _file_writes(source: str) -> set[str]:
    """Every call that writes, moves or removes a file (as ``name()``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and (kind := _file_write(node)) is not None:
            found.add(kind)
    return found


def _os_read_only(flags: ast.expr) -> bool:
    return isinstance(flags, ast.Attribute) and flags.attr == "O_RDONLY"


def _text(node: ast.expr) -> str:
    """The literal text of a string expression (f-strings and ``+`` joins: their constant
    parts), '' when it holds none."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(v) for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.BinOp):
        return _text(node.left) + _text(node.right)
    return ""


def _read_only_names(tree: ast.AST) -> set[str]:
    """Names assigned a ``mode=ro`` URI anywhere in the module."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and "mode=ro" in _text(node.value):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _sql_write(node: ast.Call, read_only: set[str]) -> str | None:
    """The kind of SQL write a call makes, or None: a connection opened without
    ``mode=ro``, a write statement executed, an index write method called."""
    _name, attr, owner = _names(node.func)
    if attr == "connect" and owner == "sqlite3" and node.args:
        first = node.args[0]
        if "mode=ro" in _text(first) or (isinstance(first, ast.Name) and first.id in read_only):
            return None
        return "sqlite3.connect(write)"
    if attr in {"execute", "executemany", "executescript"} and node.args:
        words = _text(node.args[0]).lstrip().split(None, 2)
        verb = words[0].upper() if words else ""
        if verb in SQL_WRITES or (verb == "PRAGMA" and "wal_checkpoint" in _text(node.args[0])):
            return f"{attr}({verb})"
    if attr in INDEX_WRITES:
        return f".{attr}()"
    return None


def _sql_writes(source: str) -> set[str]:
    tree = ast.parse(source)
    read_only = _read_only_names(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (kind := _sql_write(node, read_only)) is not None:
            found.add(kind)
    return found


def _scanned_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if not _rel(p).startswith(NOT_SCANNED))


def _check_module(rel: str, source: str) -> None:
    """The one-writer rule for one module (``rel``: its path in the package)."""
    if rel in WRITER_MODULES or rel in WRITES_ELSEWHERE:
        return
    writes = _file_writes(source) | _sql_writes(source)
    assert not writes, f"{rel} writes itself ({sorted(writes)}): hand a plan to the writer"
    # The store builds the writer; the asset session removes its own staging folder.
    if rel not in {"shell/archive/writer.py", "shell/archive/store.py", "shell/archive/assets.py"}:
        bad = {n for n in _all_imports(source) if n.startswith("pplx_archiver.shell.archive.disk")}
        assert not bad, f"{rel} imports the writer's Disk: {sorted(bad)}"


@pytest.mark.parametrize("path", _scanned_modules(), ids=_rel)
def test_only_the_writer_writes_into_the_archive(path: Path) -> None:
    """No module but the writer's writes, renames or removes a file, opens a write
    connection or executes a write statement (the exceptions write outside the archive's
    content, each for the reason given); the others hand the writer a plan."""
    _check_module(_rel(path), path.read_text(encoding="utf-8"))


def test_write_exceptions_still_write() -> None:
    """Every listed module still writes (a stale entry is removed)."""
    for rel in [*WRITER_MODULES, *WRITES_ELSEWHERE]:
        source = (PACKAGE / rel).read_text(encoding="utf-8")
        assert _file_writes(source) | _sql_writes(source), f"{rel}: stale entry"


def test_write_checker_catches_each_kind() -> None:
    """The scanner sees atomic writes, write-mode opens, renames, replaces, removals and
    folders made, and not reads or ``str.replace``."""
    src = (
        "write_atomic(p, b'')\nopen(p, 'ab')\np.open('wb')\np.write_bytes(b'')\n"
        "os.replace(a, b)\np.rename(q)\ntmp.replace(p)\np.unlink()\nshutil.rmtree(p)\n"
        "p.mkdir(parents=True)\nshutil.copy2(a, b)\n"
    )
    assert _file_writes(src) == {
        "write_atomic()", "open(write)", ".open(write)", ".write_bytes()", "os.replace()",
        ".rename()", ".replace(path)", ".unlink()", "shutil.rmtree()", ".mkdir()", "copy2()",
    }  # fmt: skip
    reads = (
        "open(p)\np.open('rb')\np.read_bytes()\ns.replace('a', 'b')\ndataclasses.replace(x)\n"
        "shutil.which('x')\n"
    )
    assert _file_writes(reads) == set()


def test_sql_checker_catches_each_kind() -> None:
    """The scanner sees write connections, write statements (plain, f-string, joined) and
    index write methods, and not read-only connections or reads."""
    src = (
        "db = sqlite3.connect(path, isolation_level=None)\n"
        "db.execute('INSERT INTO t VALUES (?)', (1,))\n"
        "db.executemany(f'UPDATE {t} SET a = ?', rows)\n"
        "db.execute('  delete from t ' + where)\n"
        "db.execute('PRAGMA wal_checkpoint(TRUNCATE)')\n"
        "index.upsert(u, a, status='done')\n"
        "with index.transaction() as db: pass\n"
    )
    assert _sql_writes(src) == {
        "sqlite3.connect(write)", "execute(INSERT)", "executemany(UPDATE)", "execute(DELETE)",
        "execute(PRAGMA)", ".upsert()", ".transaction()",
    }  # fmt: skip
    reads = (
        "db = sqlite3.connect(f'file:{p}?mode=ro', uri=True)\n"
        "uri = p.as_uri() + '?mode=ro'\ndb = sqlite3.connect(uri, uri=True)\n"
        "db.execute('SELECT * FROM threads WHERE status = ?', ('done',))\n"
        "db.execute('PRAGMA mmap_size = 1')\n"
    )
    assert _sql_writes(reads) == set()


def test_the_whole_package_is_scanned_and_a_planted_write_fails(tmp_path: Path) -> None:
    """The scan covers cli/, site/ and the shell, and a write planted in a module of any of
    them is caught by the same assertion the suite runs."""
    scanned = {_rel(p).split("/")[0] for p in _scanned_modules()}
    assert {"cli", "site", "shell", "core"} <= scanned
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import sqlite3\ndef f(p):\n    sqlite3.connect(p).execute('DELETE FROM threads')\n"
        "    (p / 'site' / 'x.html').write_text('x')\n",
        encoding="utf-8",
    )
    source = planted.read_text(encoding="utf-8")
    assert _file_writes(source) | _sql_writes(source) == {
        "sqlite3.connect(write)", "execute(DELETE)", ".write_text()",
    }  # fmt: skip
    for rel in ("site/build.py", "cli/_monitor.py", "shell/care/usage.py"):
        _check_module(rel, (PACKAGE / rel).read_text(encoding="utf-8"))  # clean as it is
        with pytest.raises(AssertionError, match="hand a plan to the writer"):
            _check_module(rel, (PACKAGE / rel).read_text(encoding="utf-8") + "\n" + source)
