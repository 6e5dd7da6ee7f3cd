"""The deletion check asks each candidate a bounded number of times (issue 44): a server
answering 500 leaves it for the next run after two attempts, not the whole retry policy
(6 attempts and ~34 s of waits per candidate)."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx

from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.run.deletions import CHECK_ATTEMPTS, DeletionReport, confirm
from tests.shell.fake_time import StepTime
from tests.shell.helpers import json_response, make_client


def test_a_server_error_leaves_the_candidate_after_two_attempts(tmp_path: Path) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return json_response({"detail": "boom"}, 500)

    time = StepTime()
    report = DeletionReport(candidates=["t-1", "t-2"])

    async def main() -> None:
        async with make_client(handler, time=time) as api:
            with Archive(tmp_path / "a") as archive:
                await confirm(api, archive, report)

    anyio.run(main)
    assert CHECK_ATTEMPTS == 2
    assert seen == ["/rest/thread/t-1"] * 2 + ["/rest/thread/t-2"] * 2
    assert [uuid for uuid, _ in report.undecided] == ["t-1", "t-2"]
    assert sum(time.sleeps) <= 4  # one backoff per candidate, not ~34 s
