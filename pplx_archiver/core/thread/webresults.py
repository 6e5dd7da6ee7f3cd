"""Web results (sources) as the payloads write them: objects, bare URL strings, arrays."""

from __future__ import annotations

from pplx_archiver.core.thread.node import Node
from pplx_archiver.core.thread.values import WebResult


def web_result(node: Node) -> WebResult:
    """A web result (source) object; a bare string is read as a URL."""
    value = node.v
    if isinstance(value, str):
        return WebResult(name=value, url=value)
    if type(value) is dict:  # fast path: the usual all-string object
        name = value.get("name")
        url = value.get("url")
        snippet = value.get("snippet")
        stamp = value.get("timestamp")
        if (
            type(name) is str
            and type(url) is str
            and (snippet is None or type(snippet) is str)
            and (stamp is None or type(stamp) is str)
        ):
            return WebResult(name=name, url=url, snippet=snippet or "", timestamp=stamp or "")
    return WebResult(
        name=node.get_text("name") or node.get_text("title"),
        url=node.get_text("url"),
        snippet=node.get_text("snippet"),
        timestamp=node.get_text("timestamp"),
    )


def web_results(nodes: list[Node]) -> tuple[WebResult, ...]:
    """Web results of an array, in order."""
    return tuple(web_result(n) for n in nodes)


def plain_results(values: object) -> tuple[WebResult, ...] | None:
    """An array of the usual all-string source objects read without path bookkeeping.

    None when ``values`` is not such an array (any other element shape): the caller then
    takes the path-aware route, which gives the same results or names the bad value.
    """
    if type(values) is not list:
        return None
    out: list[WebResult] = []
    for value in values:
        if type(value) is not dict:
            return None
        name = value.get("name")
        url = value.get("url")
        snippet = value.get("snippet")
        stamp = value.get("timestamp")
        if not (
            type(name) is str
            and type(url) is str
            and (snippet is None or type(snippet) is str)
            and (stamp is None or type(stamp) is str)
        ):
            return None
        out.append(WebResult(name, url, snippet or "", stamp or ""))
    return tuple(out)


def web_results_at(parent: Node, key: str) -> tuple[WebResult, ...]:
    """Web results of the array under ``key`` (() when absent/null); same as
    ``web_results(parent.get_list(key))``, faster for the usual all-string objects."""
    fast = plain_results(parent.raw(key))
    return fast if fast is not None else web_results(parent.get_list(key))
