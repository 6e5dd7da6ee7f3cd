"""A listing row rebuilt from thread.json keeps the URL signal (re-render, reindex)."""

from __future__ import annotations

from pplx_archiver.core.thread.model import RawPage, ThreadInput
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.shell.archive.stored import listing_from_record
from pplx_archiver.shell.run.pipeline import row_from_arg
from tests.core import builders as b


def test_rebuilt_row_keeps_the_computer_task_url() -> None:
    """A thread exported by its /computer/tasks/ URL re-renders byte for byte from its record."""
    entry = b.entry("e1", 1, search_mode=None, display_model=None, blocks=[b.answer_block("a")])
    page = b.page([entry])
    pages = ((RawPage({}, page),), (RawPage({}, page),))
    row = row_from_arg("https://www.perplexity.ai/computer/tasks/abc-123")
    first = render_thread(ThreadInput("abc-123", *pages, listing=row), b.CTX)
    rebuilt = listing_from_record(first.thread_uuid, first.record)
    assert "/computer/tasks/" in rebuilt.url
    again = render_thread(ThreadInput("abc-123", *pages, listing=rebuilt), b.CTX)
    assert again.mode == "computer" and again.files == first.files
