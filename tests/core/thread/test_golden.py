"""Golden Markdown per mode and special case; ``PPLX_UPDATE_GOLDEN=1`` regenerates them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pplx_archiver.core.thread.model import RenderContext
from pplx_archiver.core.thread.render import render_thread
from tests.core.builders import CTX
from tests.core.scenarios import SCENARIOS

GOLDEN = Path(__file__).parent.parent / "golden"
UPDATE = os.environ.get("PPLX_UPDATE_GOLDEN") == "1"


def _snapshot(name: str, lang: str) -> str:
    ctx = CTX if lang == "en" else RenderContext(exported_at=CTX.exported_at, lang=lang)
    result = render_thread(SCENARIOS[name](), ctx)
    parts = [f"<!-- dir: {result.dir_name} -->"]
    for path, data in result.files.items():
        parts.append(f"<!-- file: {path} -->\n{data.decode()}")
    return "\n".join(parts)


@pytest.mark.parametrize(("name", "lang"), [(n, "en") for n in SCENARIOS] + [("computer", "zh")])
def test_golden(name: str, lang: str) -> None:
    """The rendered files of a scenario equal the reviewed golden file byte for byte."""
    path = GOLDEN / f"{name}.{lang}.md"
    text = _snapshot(name, lang)
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden {path.name}; run with PPLX_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")
