"""Unit tests of the usage backfill: parsing, statuses, and what a later run asks again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from pplx_archiver.errors import ForbiddenError, PayloadError, TransientError
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care.usage import UsageStore, backfill_usage, parse_usage
from tests.shell.archive_builders import build, slug_of


class FakeClient:
    """Answers usage requests from a table: a body, or an exception to raise."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def get_json(
        self, path: str, params: Any, *, kind: str | None = None
    ) -> tuple[Any, bytes]:
        """The canned answer for the thread id in ``params``."""
        thread_id = dict(params)["thread_id"]
        self.asked.append(thread_id)
        answer = self.answers[thread_id]
        if isinstance(answer, Exception):
            raise answer
        return answer, b""


def test_parse_usage_reads_cents_and_meters_and_names_bad_values() -> None:
    """A well-formed answer is read; a bad one raises PayloadError naming the field."""
    body = {"usage_cents": 12, "meter_usage": [{"meter_type": "search", "cost_cents": 12}]}
    assert parse_usage(body, "usage") == (12, [{"meter_type": "search", "cost_cents": 12}])
    with pytest.raises(PayloadError, match="usage_cents"):
        parse_usage({"usage_cents": "12"}, "usage")
    with pytest.raises(PayloadError, match=r"meter_usage\[0\]"):
        parse_usage({"usage_cents": 1, "meter_usage": [3]}, "usage")


def test_forbidden_is_settled_and_errors_are_asked_again(tmp_path: Path) -> None:
    """A 403 is recorded and never asked again; a transient failure is asked by the next run."""
    build(tmp_path, 3)
    ids = [slug_of(i) for i in range(3)]
    client = FakeClient(
        {
            ids[0]: {"usage_cents": 7, "meter_usage": []},
            ids[1]: ForbiddenError("forbidden: X", code="X"),
            ids[2]: TransientError("boom"),
        }
    )
    with Archive(tmp_path) as archive:
        first = anyio.run(lambda: backfill_usage(archive, client, clock=lambda: "t"))  # type: ignore[arg-type]
        assert (first.fetched, first.forbidden, first.failed) == (1, 1, 1)
        client.answers[ids[2]] = {"usage_cents": 5, "meter_usage": []}
        client.asked.clear()
        second = anyio.run(lambda: backfill_usage(archive, client, clock=lambda: "t"))  # type: ignore[arg-type]
        assert client.asked == [ids[2]]
        assert (second.fetched, second.skipped) == (1, 2)
    store = UsageStore(tmp_path / "index" / "archive.sqlite")
    try:
        totals = store.totals_by_mode()
    finally:
        store.close()
    assert totals is not None and totals["total_cents"] == 12
    assert sum(v["forbidden"] for v in totals["by_mode"].values()) == 1
