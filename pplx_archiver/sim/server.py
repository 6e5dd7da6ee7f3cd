"""The simulated Perplexity web API as a Starlette app: ``create_app(config)``.

Endpoints (real paths; ``version``/``source`` query parameters accepted and ignored):
``GET /api/auth/session``, ``POST /rest/thread/list_ask_threads``,
``POST /rest/perplexity_ask/graphql``, ``GET /rest/thread/{uuid_or_slug}``,
``GET /rest/collections/{list_user_collections,get_collection,list_collection_threads}``,
``GET /rest/assets/{uuid}/data``, the CDN route ``GET /__cdn/{asset}/{file}`` (signed,
expiring), ``GET /rest/models/config/v2``, ``GET /rest/billing/credits/thread-usage``;
control endpoints ``/__sim/mutate``, ``/__sim/stats``, ``/__sim/truth``. Bad input gets the
error the real service gives.
"""

from __future__ import annotations

import base64
import binascii
import collections
import hashlib
import hmac
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pplx_archiver.sim import build, ids, sessions
from pplx_archiver.sim.account import AssetVersion, ThreadPlan, context_uuid
from pplx_archiver.sim.ask import routes as ask_routes
from pplx_archiver.sim.config import LIBRARY_PAGINATION_HASH, SPACE_THREADS_HASH, SimConfig
from pplx_archiver.sim.faults import FaultMiddleware, Stats
from pplx_archiver.sim.models import models_config
from pplx_archiver.sim.space_graphql import space_threads
from pplx_archiver.sim.state import AccountState
from pplx_archiver.sim.text import asset_bytes

Json = dict[str, Any]
KEY_PAIR = "K2SIMULATEDKEYPAIR"


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(data), status, headers, media_type="application/json")


def _error(status: int, code: str, message: str | None = None) -> Response:
    detail: Json = {"error_code": code}
    if message:
        detail["message"] = message
    return _json({"detail": detail}, status)


def _validation(loc: list[str], msg: str) -> Response:
    return _json({"detail": [{"loc": loc, "msg": msg, "type": "value_error"}]}, 422)


class SimServer:
    """State and handlers of one simulator instance."""

    def __init__(self, config: SimConfig, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.clock = clock
        self.state = AccountState(config)
        self.sessions = sessions.Sessions(config, self.state.account_id)
        self.stats = Stats()
        self.secret = hashlib.sha256(f"cdn:{config.seed}".encode()).digest()
        self._cache: collections.OrderedDict[tuple[Any, ...], bytes] = collections.OrderedDict()

    # --- helpers ----------------------------------------------------------------------
    def check_auth(self, request: Request, thread_endpoint: bool) -> str:
        return self.sessions.check(request.cookies, request.headers, thread_endpoint)

    def _finish(self, response: Response) -> Response:
        cookie = self.sessions.after_ok()
        if cookie:
            response.headers.append("set-cookie", cookie)
        if self.config.era == "c":
            response.headers["x-pplx-account-used"] = self.state.account_id
        return response

    def _expiry(self) -> int:
        ttl = max(1, self.config.asset_url_ttl_s)
        return (int(self.clock()) // ttl + 1) * ttl + ttl // 2 + 1

    def _sig(self, path: str, expires: int) -> str:
        mac = hmac.new(self.secret, f"{path}|{expires}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac[:24]).decode().rstrip("=")

    def signer(self, origin: str, expires: int) -> Callable[[AssetVersion], str]:
        """Signs CDN URLs of assets for ``origin`` with one expiry time."""

        def sign(asset: AssetVersion) -> str:
            path = f"/__cdn/{asset.uuid}/{urllib.parse.quote(asset.file_name)}"
            query = f"Expires={expires}&Signature={self._sig(path, expires)}&Key-Pair-Id={KEY_PAIR}"
            return f"{origin}{path}?{query}"

        return sign

    def _cached(self, key: tuple[Any, ...], make: Callable[[], bytes]) -> bytes:
        body = self._cache.get(key)
        if body is not None:
            self._cache.move_to_end(key)
            return body
        body = make()
        self._cache[key] = body
        if len(self._cache) > self.config.cache_size:
            self._cache.popitem(last=False)
        return body

    @staticmethod
    def _origin(request: Request) -> str:
        return f"{request.url.scheme}://{request.url.netloc}"

    # --- session ----------------------------------------------------------------------
    async def session(self, request: Request) -> Response:
        if self.check_auth(request, False) == sessions.LOGGED_OUT:
            return _json({})
        user = {
            "id": self.state.account_id,
            "email": "sim@example.invalid",
            "name": "Sim User",
            "image": None,
            "username": self.config.username,
            "subscription_status": "active",
            "payment_tier": "pro",
            "org_uuid": None,
            "org_role": None,
        }
        expires = build.iso_z(int(self.clock() + 30 * 86400) * 1_000_000)
        return self._finish(
            _json({"user": user, "expires": expires, "preventUsernameRedirect": False})
        )

    # --- listings ---------------------------------------------------------------------
    async def list_ask_threads(self, request: Request) -> Response:
        if request.method != "POST":
            return _error(400, "BAD_REQUEST", "Use POST")
        try:
            body = orjson.loads(await request.body() or b"{}")
        except orjson.JSONDecodeError:
            return _validation(["body"], "JSON decode error")
        if not isinstance(body, dict):
            return _validation(["body"], "body must be an object")
        limit, offset = body.get("limit", 20), body.get("offset", 0)
        if not isinstance(limit, int) or not isinstance(offset, int) or limit < 0 or offset < 0:
            return _validation(["body", "limit"], "limit and offset must be non-negative integers")
        if self.check_auth(request, True) != sessions.OK:
            return _json([])
        limit = min(limit, self.config.list_max_limit)
        state = self.state
        total = state.listed_count()
        indices = state.listing(offset, limit)
        has_next = offset + len(indices) < total
        spaces = state.spaces() if any(state.plan(i).space is not None for i in indices) else None
        items = []
        for n, index in enumerate(indices):
            item = build.list_item(state.plan(index), n, spaces)
            item["has_next_page"] = has_next
            item["total_threads"] = min(total, self.config.total_threads_cap)
            items.append(item)
        return self._finish(_json(items))

    def _thc(self, index: int) -> str:
        plan_updated = self.state.updated_us(index)
        ctx = self.state.plan(index).context_uuid
        raw = orjson.dumps({"s": "user_updated", "d": {"t": plan_updated // 1000, "c": ctx}})
        return "THC:" + base64.b64encode(raw).decode()

    def _thc_position(self, cursor: str) -> int | None:
        if not cursor.startswith("THC:"):
            return None
        try:
            data = orjson.loads(base64.b64decode(cursor[4:], validate=True))
            t = int(data["d"]["t"])
            context = str(data["d"]["c"])
        except (binascii.Error, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None
        decoded = ids.decode_id(context, self.config.seed)
        if decoded is not None and decoded[0] == ids.CONTEXT and decoded[1] < self.state.total:
            updated = self.state.updated_us(decoded[1])
            if updated // 1000 == t:
                return self.state.position_before(updated)
        return self.state.position_before(t * 1000)

    async def graphql(self, request: Request) -> Response:
        try:
            body = orjson.loads(await request.body())
            query_hash = body["extensions"]["persistedQuery"]["sha256Hash"]
            variables = body.get("variables") or {}
            if not isinstance(variables, dict) or not isinstance(query_hash, str):
                raise TypeError
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return _json(
                {
                    "errors": [
                        {
                            "message": "Access denied: persisted queries only",
                            "extensions": {"code": "BAD_REQUEST"},
                        }
                    ]
                },
                400,
            )
        if query_hash not in self.config.graphql_hashes:
            return _json(
                {
                    "errors": [
                        {
                            "message": "PersistedQueryNotFound",
                            "extensions": {"code": "PERSISTED_QUERY_NOT_FOUND"},
                        }
                    ]
                }
            )
        auth = self.check_auth(request, True)
        if auth == sessions.LOGGED_OUT:
            return _json({"data": {"viewer": None}})
        if query_hash == SPACE_THREADS_HASH:  # the Era C space query
            return self._finish(_json(space_threads(self.state, variables, auth == sessions.OK)))
        page = self.config.graphql_page
        count = variables.get("count")
        if query_hash == LIBRARY_PAGINATION_HASH and isinstance(count, int) and count > 0:
            page = min(count, 100)
        cursor = variables.get("cursor") or variables.get("after")
        start = 0
        if cursor:
            position = self._thc_position(str(cursor))
            if position is None:
                return _json(
                    {
                        "errors": [
                            {"message": "Invalid cursor", "extensions": {"code": "BAD_USER_INPUT"}}
                        ]
                    }
                )
            start = position
        state = self.state
        indices = [] if auth != sessions.OK else state.listing(start, page)
        spaces = state.spaces() if any(state.plan(i).space is not None for i in indices) else None
        edges: list[Json] = [
            {"node": build.graphql_node(state.plan(i), spaces), "cursor": self._thc(i)}
            for i in indices
        ]
        more = start + len(indices) < state.listed_count()
        end_cursor: str | None = str(edges[-1]["cursor"]) if edges else None
        if not more and self.config.graphql_empty_end_cursor:
            more, end_cursor = True, ""
        threads = {"edges": edges, "pageInfo": {"hasNextPage": more, "endCursor": end_cursor}}
        data = {"data": {"viewer": {"recentGroup": {"threads": threads}}}}
        return self._finish(_json(data))

    # --- thread detail ----------------------------------------------------------------
    def _cursor(self, plan: ThreadPlan, created_us: int, backend_uuid: str) -> str:
        raw = orjson.dumps(
            {"pk": f"CTX#{plan.context_uuid}", "sk": f"E#{created_us}#{backend_uuid}"}
        )
        return base64.urlsafe_b64encode(raw).decode()

    @staticmethod
    def _cursor_key(cursor: str, context: str) -> tuple[int, str] | None:
        try:
            data = orjson.loads(base64.urlsafe_b64decode(cursor.encode()))
            if data["pk"] != f"CTX#{context}":
                return None
            _, created, uuid = str(data["sk"]).split("#", 2)
            return int(created), uuid
        except (binascii.Error, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None

    def _gone(self, index: int | None) -> Response | None:
        """The answer for a thread that is not there (vanished, deleted, expired)."""
        if index is None or self.state.status(index) == "vanished":
            return _error(404, "THREAD_NOT_FOUND", "Thread not found")
        status = self.state.status(index)
        if status == "deleted":
            return _error(400, "ENTRY_DELETED", "This entry has been deleted")
        if status == "expired":
            return _error(400, "ENTRY_EXPIRED", "This entry has expired")
        return None

    async def thread(self, request: Request) -> Response:
        auth = self.check_auth(request, True)
        if auth == sessions.LOGGED_OUT:
            return _error(401, "UNAUTHORIZED", "Not authenticated")
        if auth == sessions.NO_ACCOUNT:
            return _error(403, "VIEW_THREAD_NOT_ALLOWED")
        kind, index = self.state.lookup(request.path_params["thread_id"])
        if kind == "sibling":
            return _error(403, "VIEW_THREAD_NOT_ALLOWED")
        gone = self._gone(index)
        if gone is not None:
            return gone
        assert index is not None
        if index >= self.state.size and self.config.transient_404:
            hits = self.state.detail_hits.get(index, 0)
            self.state.detail_hits[index] = hits + 1
            if hits < self.config.transient_404:
                return _error(404, "THREAD_NOT_FOUND", "Thread not found")
        if index in self.state.hostile:
            return self._finish(Response(self.state.hostile[index], media_type="application/json"))
        q = request.query_params
        blocks = q.get("with_schematized_response", "").lower() == "true"
        raw_limit = q.get("limit")
        limit = self.config.detail_default_limit
        if raw_limit is not None:
            try:
                limit = int(raw_limit)
            except ValueError:
                return _validation(["query", "limit"], "value is not a valid integer")
            if limit < 1:
                return _validation(["query", "limit"], "limit must be >= 1")
        limit = min(limit, self.config.detail_max_limit)
        cursor = q.get("cursor") or None
        key: tuple[int, str] | None = None
        if cursor is not None:
            key = self._cursor_key(cursor, context_uuid(self.config.seed, index))
            if key is None:
                return _error(400, "INVALID_CURSOR", "Invalid cursor")
        origin = self._origin(request)
        expires = self._expiry()
        cache_key = (index, self.state.versions.get(index, 0), blocks, key, limit, origin, expires)
        body = self._cached(
            cache_key,
            lambda: self._thread_body(self.state.plan(index), blocks, key, limit, origin, expires),
        )
        if self.state.author_of(index) != build.AUTHOR:  # another user's (or account's) thread
            author = orjson.dumps(self.state.author_of(index))
            body = body.replace(b'"author_username":"' + build.AUTHOR.encode() + b'"',
                                b'"author_username":' + author)  # fmt: skip
        return self._finish(Response(body, media_type="application/json"))

    def _thread_body(
        self,
        plan: ThreadPlan,
        blocks: bool,
        key: tuple[int, str] | None,
        limit: int,
        origin: str,
        expires: int,
    ) -> bytes:
        turns = list(plan.turns)
        if key is not None:
            turns = [t for t in turns if (t.created_us, t.backend_uuid) < key]
        page = turns[-limit:]
        has_next = len(turns) > limit
        sign = self.signer(origin, expires)
        spaces = self.state.spaces() if plan.space is not None else None
        body = {
            "background_entries": [build.background_entry(plan, p, blocks) for p in plan.payloads],
            "entries": [build.entry(plan, t, blocks, sign, spaces) for t in page],
            "has_next_page": has_next,
            "next_cursor": (
                self._cursor(plan, page[0].created_us, page[0].backend_uuid) if has_next else None
            ),
            "status": "success",
            "thread_metadata": build.thread_metadata(plan, spaces),
        }
        return orjson.dumps(body)

    # --- spaces -----------------------------------------------------------------------
    def _space_by_slug(self, slug: str) -> tuple[int, Json] | None:
        for k, space in enumerate(self.state.spaces()):
            if space["slug"] == slug:
                return k, space
        return None

    @staticmethod
    def _int_param(request: Request, name: str, default: int) -> int | Response:
        raw = request.query_params.get(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            return _validation(["query", name], "value is not a valid integer")
        if value < 0:
            return _validation(["query", name], "must be >= 0")
        return value

    async def list_user_collections(self, request: Request) -> Response:
        limit = self._int_param(request, "limit", 30)
        offset = self._int_param(request, "offset", 0)
        if isinstance(limit, Response):
            return limit
        if isinstance(offset, Response):
            return offset
        if self.check_auth(request, True) != sessions.OK:
            return _json([])
        spaces = self.state.spaces()
        page = spaces[offset : offset + min(limit, 100)]
        more = offset + len(page) < len(spaces)
        return self._finish(_json([{**s, "has_next_page": more} for s in page]))

    async def get_collection(self, request: Request) -> Response:
        q = request.query_params
        if "collection_slug" not in q:
            return _validation(["query", "collection_slug"], "field required")
        found = self._space_by_slug(q["collection_slug"])
        if self.check_auth(request, True) != sessions.OK or found is None:
            return _json({"status": "failed", "_response_type": "VIEW_COLLECTION_NOT_ALLOWED"})
        _, space = found
        body = {"status": "completed", "_response_type": "COMPLETED_RESPONSE", **space}
        return self._finish(_json(body))

    async def list_collection_threads(self, request: Request) -> Response:
        q = request.query_params
        if "collection_slug" not in q:
            return _validation(["query", "collection_slug"], "field required")
        limit = self._int_param(request, "limit", 20)
        offset = self._int_param(request, "offset", 0)
        if isinstance(limit, Response):
            return limit
        if isinstance(offset, Response):
            return offset
        found = self._space_by_slug(q["collection_slug"])
        if self.check_auth(request, True) != sessions.OK or found is None:
            return _json([])
        k, _space = found
        members = [i for i in self.state.members().get(k, []) if not self.state.hidden(i)]
        page = members[offset : offset + min(limit, 20)]
        more = offset + len(page) < len(members)
        spaces = self.state.spaces()
        items = []
        for n, index in enumerate(page):
            item = build.list_item(self.state.plan(index), n, spaces)
            item.update(
                has_next_page=more,
                total_threads=len(members) * 3 + 2,
                author_username=self.state.author_of(index),
                author_image=None,
                updated_datetime=item["last_query_datetime"],
            )
            items.append(item)
        return self._finish(_json(items))

    # --- billing ----------------------------------------------------------------------
    def _usage_index(self, thread_id: str) -> int | None:
        """The thread named by a context uuid (as the web app sends) or a thread uuid."""
        decoded = ids.decode_id(thread_id, self.config.seed)
        if (
            decoded is not None
            and decoded[0] == ids.CONTEXT
            and decoded[1] < self.state.total
            and context_uuid(self.config.seed, decoded[1]) == thread_id
        ):
            return decoded[1]
        _kind, index = self.state.lookup(thread_id)
        return index

    async def thread_usage(self, request: Request) -> Response:
        """Credit usage of one thread; every 7th thread (by index) answers 403 with a code."""
        thread_id = request.query_params.get("thread_id")
        if not thread_id:
            return _validation(["query", "thread_id"], "field required")
        auth = self.check_auth(request, True)
        if auth == sessions.LOGGED_OUT:
            return _error(401, "UNAUTHORIZED", "Not authenticated")
        index = self._usage_index(thread_id)
        if index is None:
            return _error(404, "THREAD_NOT_FOUND", "Thread not found")
        if index % 7 == 3:
            return _error(403, "THREAD_USAGE_NOT_ALLOWED")
        digest = hashlib.sha256(f"{self.config.seed}:usage:{index}".encode()).digest()
        search, model = digest[0] % 40, digest[1] * 3 % 500
        meters = [{"meter_type": "search", "cost_cents": search}]
        meters.append({"meter_type": "model", "cost_cents": model})
        return self._finish(_json({"usage_cents": search + model, "meter_usage": meters}))

    # --- assets -----------------------------------------------------------------------
    def find_asset(self, asset_id: str) -> tuple[ThreadPlan, str, AssetVersion] | None:
        decoded = ids.decode_id(asset_id, self.config.seed)
        if decoded is None or decoded[0] != ids.ASSET or decoded[1] >= self.state.total:
            return None
        plan = self.state.plan(decoded[1])
        for turn in plan.turns:
            for asset in turn.assets:
                if asset.uuid == asset_id:
                    return plan, turn.backend_uuid, asset
        return None

    async def asset_data(self, request: Request) -> Response:
        auth = self.check_auth(request, True)
        if auth == sessions.LOGGED_OUT:
            return _error(401, "UNAUTHORIZED", "Not authenticated")
        if auth == sessions.NO_ACCOUNT:
            return _error(403, "VIEW_THREAD_NOT_ALLOWED")
        found = self.find_asset(request.path_params["asset_id"])
        if found is None or found[0].state != "ok":
            return _error(404, "ASSET_NOT_FOUND")
        plan, entry_uuid, asset = found
        obj = build.asset_object(asset, self.signer(self._origin(request), self._expiry()))
        data = {k: v for k, v in obj.items() if k not in ("uuid", "asset_type")}
        body = {
            "asset_data": data,
            "asset_type": asset.asset_type,
            "entry_uuid": entry_uuid,
            "context_uuid": plan.context_uuid,
            "source_thread_path": f"/search/{plan.slug}",
            "thread_access": 1,
            "is_owner": True,
            "has_owning_space": plan.space is not None,
            "signed_url": None,
            "read_write_token": plan.rw_token,
            "allow_remix": False,
        }
        return self._finish(_json(body))

    async def cdn(self, request: Request) -> Response:
        path = request.url.path
        q = request.query_params
        denied = Response(
            b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>'
            b"<Message>Access denied</Message></Error>",
            403,
            media_type="text/xml",
        )
        try:
            expires = int(q.get("Expires", ""))
        except ValueError:
            return denied
        raw_path = request.scope.get("raw_path", path.encode()).decode()
        signature = q.get("Signature", "")
        if not hmac.compare_digest(signature, self._sig(raw_path, expires)):
            return denied
        if self.clock() > expires:
            return Response(
                b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>'
                b"<Message>Request has expired</Message></Error>",
                403,
                media_type="text/xml",
            )
        found = self.find_asset(request.path_params["asset_id"])
        if found is None:
            return denied
        asset = found[2]
        if self.state.failing_reports and asset.asset_type == "RESEARCH_REPORT":
            return Response(b"internal error", 500, media_type="text/plain")
        media = "text/markdown" if asset.content != "binary" else "application/octet-stream"
        if asset.file_name.endswith(".py"):
            media = "text/x-python"
        return Response(asset_bytes(asset.uuid, asset.content), media_type=media)

    async def models(self, request: Request) -> Response:
        return _json(models_config())

    # --- control ----------------------------------------------------------------------
    def _index_of(self, thread_id: Any) -> int:
        _kind, index = self.state.lookup(str(thread_id))
        if index is None:
            raise ValueError(f"unknown thread {thread_id!r}")
        return index

    async def mutate(self, request: Request) -> Response:
        try:
            body = orjson.loads(await request.body())
            if not isinstance(body, dict):
                raise ValueError("body must be a JSON object")
            result: Json = {}
            add = body.get("add", 0)
            if not isinstance(add, int) or add < 0:
                raise ValueError("add must be a non-negative integer")
            if add:
                result["added"] = self.state.add(add)
            for item in body.get("continue", []):
                turns = int(item.get("turns", 1))
                if turns < 1:
                    raise ValueError("continue.turns must be >= 1")
                plan = self.state.continue_(self._index_of(item["thread"]), turns)
                result.setdefault("continued", []).append(plan.uuid)
            for item in body.get("rewrite", []):
                plan = self.state.rewrite(self._index_of(item["thread"]), item.get("turn"))
                result.setdefault("rewritten", []).append(plan.uuid)
            self._mutate_answers(body, result)
            for thread_id in body.get("delete", []):
                self.state.delete(self._index_of(thread_id))
                result.setdefault("deleted", []).append(thread_id)
            vanish = body.get("vanish", 0)
            if not isinstance(vanish, (int, float)) or not 0 <= vanish <= 1:
                raise ValueError("vanish must be a share within [0, 1]")
            if vanish:
                result["vanished"] = self.state.vanish(float(vanish))
            for thread_id in body.get("expire", []):
                self.state.expire(self._index_of(thread_id))
                result.setdefault("expired", []).append(thread_id)
            for thread_id in body.get("restore", []):
                self.state.restore(self._index_of(thread_id))
                result.setdefault("restored", []).append(thread_id)
            for item in body.get("amplify", []):
                # a hostile answer: a body of N empty entries (issue 44), tiny on the wire
                entries = int(item.get("entries", 250_000))
                index = self._index_of(item["thread"])
                self.state.hostile[index] = b'{"entries":[' + b"{}," * (entries - 1) + b"{}]}"
                result.setdefault("amplified", []).append(item["thread"])
        except (orjson.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
            return _json({"error": f"bad mutation: {exc}"}, 400)
        return _json(result)

    def _mutate_answers(self, body: Json, result: Json) -> None:
        """``edit`` (an answer changed under its id, ``silent`` or not), ``substitute`` (a
        turn served by another model) and ``fail_reports`` (the CDN fails research reports)."""
        for item in body.get("edit", []):
            index = self._index_of(item["thread"])
            plan = self.state.edit(index, item.get("turn"), bool(item.get("silent", False)))
            result.setdefault("edited", []).append(plan.uuid)
        for item in body.get("substitute", []):
            served = str(item.get("served", "gemini38flash"))
            plan = self.state.substitute(self._index_of(item["thread"]), item.get("turn"), served)
            result.setdefault("substituted", []).append(plan.uuid)
        if "fail_reports" in body:
            self.state.failing_reports = bool(body["fail_reports"])
            result["fail_reports"] = self.state.failing_reports

    async def stats_endpoint(self, request: Request) -> Response:
        if request.method == "DELETE":
            self.stats.reset()
        return _json(self.stats.as_json())

    async def truth(self, request: Request) -> Response:
        return _json(self.state.truth())


def create_app(
    config: SimConfig | None = None, *, clock: Callable[[], float] = time.time
) -> FaultMiddleware:
    """The ASGI app of one simulator instance (``app.sim`` is its :class:`SimServer`)."""
    config = config or SimConfig()
    server = SimServer(config, clock)
    routes = [
        Route("/api/auth/session", server.session, methods=["GET"]),
        Route("/rest/thread/list_ask_threads", server.list_ask_threads, methods=["GET", "POST"]),
        Route("/rest/perplexity_ask/graphql", server.graphql, methods=["POST"]),
        Route("/rest/collections/list_user_collections", server.list_user_collections),
        Route("/rest/collections/get_collection", server.get_collection),
        Route("/rest/collections/list_collection_threads", server.list_collection_threads),
        Route("/rest/assets/{asset_id}/data", server.asset_data),
        Route("/rest/thread/{thread_id}", server.thread, methods=["GET"]),
        Route("/rest/billing/credits/thread-usage", server.thread_usage),
        Route("/rest/models/config/v2", server.models),
        Route("/rest/models/config", server.models),
        Route("/__cdn/{asset_id}/{file_name:path}", server.cdn),
        Route("/__sim/mutate", server.mutate, methods=["POST"]),
        Route("/__sim/stats", server.stats_endpoint, methods=["GET", "DELETE"]),
        Route("/__sim/truth", server.truth),
    ]
    routes += ask_routes(server)  # POST /rest/sse/perplexity_ask and its neighbours
    app = FaultMiddleware(Starlette(routes=routes), config, server.stats)
    app.sim = server
    return app
