"""How the command line names itself in the hints it prints."""

from __future__ import annotations

import shlex
from pathlib import Path


def program_name(argv0: str, on_path: str | None, executable: str) -> str:
    """How to write ``pplx-export`` so that a hint works as typed in a fresh shell.

    ``on_path`` is what ``shutil.which("pplx-export")`` found. When it is the running
    program, the bare name works; otherwise the program's path as it was invoked (e.g.
    ``.venv/bin/pplx-export`` after ``make demo``). Run as ``python -m pplx_archiver``, the
    hint names the interpreter that ran it.
    """
    program = Path(argv0)
    if program.name != "pplx-export":
        return f"{shlex.quote(executable)} -m pplx_archiver"
    if on_path is not None:
        try:
            if Path(on_path).resolve() == program.resolve():
                return "pplx-export"
        except OSError:
            pass
    return shlex.quote(str(program))
