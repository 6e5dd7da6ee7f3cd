"""The Era C space query of the simulated GraphQL endpoint: ``SpaceProjectThreadsRelayQuery``.

Variables ``spaceId`` (the space uuid), ``ownThreadsOnly``, ``searchTerm``, ``groupType``,
``count`` (default 25, at most 100) and ``cursor`` (opaque ``SPC:<base64 offset>``); the
answer is at ``data.viewer.space.threadGroup.threads{edges[{node, cursor}], pageInfo}``,
every member's threads the account can read (deleted ones are gone), each node with
``author{username}``. An unknown space, or a request without a usable session, answers
``space: null``; a bad cursor a GraphQL error ``BAD_USER_INPUT``.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

from pplx_archiver.sim import build

if TYPE_CHECKING:
    from pplx_archiver.sim.state import AccountState

Json = dict[str, Any]


def _cursor(position: int) -> str:
    return "SPC:" + base64.b64encode(str(position).encode()).decode()


def _position(cursor: Any) -> int | None:
    if cursor in (None, ""):
        return 0
    if not isinstance(cursor, str) or not cursor.startswith("SPC:"):
        return None
    try:
        value = int(base64.b64decode(cursor[4:], validate=True).decode())
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return value if value >= 0 else None


def _members(state: AccountState, space_id: Any, own_only: bool) -> list[int] | None:
    for k, space in enumerate(state.spaces()):
        if space["uuid"] == space_id:
            members = [i for i in state.members().get(k, []) if not state.hidden(i)]
            return [i for i in members if i not in state.shared] if own_only else members
    return None


def space_threads(state: AccountState, variables: Json, authenticated: bool) -> Json:
    """The GraphQL answer for one page of a space's threads."""
    members = _members(state, variables.get("spaceId"), bool(variables.get("ownThreadsOnly")))
    if not authenticated or members is None:
        return {"data": {"viewer": {"space": None}}}
    start = _position(variables.get("cursor"))
    if start is None:
        error = {"message": "Invalid cursor", "extensions": {"code": "BAD_USER_INPUT"}}
        return {"errors": [error]}
    count = variables.get("count")
    size = min(count, 100) if isinstance(count, int) and count > 0 else 25
    page = members[start : start + size]
    spaces = state.spaces()
    edges = []
    for n, index in enumerate(page):
        node = build.graphql_node(state.plan(index), spaces)
        node["author"] = {"username": state.author_of(index), "__typename": "User"}
        edges.append({"node": node, "cursor": _cursor(start + n + 1)})
    info = {
        "hasNextPage": start + len(page) < len(members),
        "endCursor": edges[-1]["cursor"] if edges else None,
    }
    group = {"threads": {"edges": edges, "pageInfo": info}}
    return {"data": {"viewer": {"space": {"uuid": variables.get("spaceId"), "threadGroup": group}}}}
