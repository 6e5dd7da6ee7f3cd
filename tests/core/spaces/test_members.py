"""Account folders of other members' threads, and a space's contributions per member."""

from __future__ import annotations

import pytest

from pplx_archiver.core.spaces.members import (
    UNKNOWN_AUTHOR,
    contributions,
    contributions_table,
    member_folder,
)


@pytest.mark.parametrize(
    ("author", "folder"),
    [
        ("alice", "alice"),
        ("Ana Ñ/../other:user", "Ana Ñ-other-user"),
        ("../../etc/passwd", "etc-passwd"),
        ("", UNKNOWN_AUTHOR),
        ("..", UNKNOWN_AUTHOR),
        ("\x00\x1b\u200b", UNKNOWN_AUTHOR),
        ("y" * 500, "y" * 80),
    ],
)
def test_plain_and_hostile_names_sanitize(author: str, folder: str) -> None:
    assert member_folder(author, own="me") == folder


@pytest.mark.parametrize("author", ["index", "INDEX", "spaces", "Relations", "site", "me.", "ME"])
def test_names_landing_on_a_root_or_the_own_folder_get_their_own(author: str) -> None:
    folder = member_folder(author, own="me")
    base, _, tag = folder.partition("~")
    assert base.casefold() in {"index", "spaces", "relations", "site", "me"}
    assert len(tag) == 8 and int(tag, 16) >= 0
    assert member_folder(author, own="me") == folder  # deterministic
    assert member_folder("x" * 200 + "~", own="x" * 80).startswith("x" * 71 + "~")
    assert len(member_folder("x" * 200, own="x" * 80)) <= 80


def test_contributions_list_members_first_then_other_authors() -> None:
    threads: list[dict[str, str | None]] = [
        {"author": "bob", "path": "bob/search/2026-01-01_a_11111111"},
        {"author": "bob", "path": "bob/computer/2026-01-02_b_22222222"},
        {"author": "bob", "path": None},
        {"author": "zed", "path": "zed/search/2026-01-03_c_33333333"},
        {"author": None, "path": None},
    ]
    rows = contributions(["owner", "bob", "owner"], threads)
    assert rows == [
        {"member": "owner", "threads": 0, "archived": 0, "modes": {}},
        {"member": "bob", "threads": 3, "archived": 2, "modes": {"computer": 1, "search": 1}},
        {"member": UNKNOWN_AUTHOR, "threads": 1, "archived": 0, "modes": {}},
        {"member": "zed", "threads": 1, "archived": 1, "modes": {"search": 1}},
    ]
    assert contributions_table(rows)[1] == ["bob", "3", "2", "computer 1, search 1"]
