"""A Kubernetes API emulator on loopback HTTP for contract tests: kmock 0.8, extended.

kmock's KubernetesEmulator stores objects but has no resourceVersions, conflicts, selectors,
PUT, status subresource, resumable or expiring watches, evictions or TokenReviews. This
subclass adds them, the way the kube-apiserver behaves, for the resources brupop touches.
It relies on kmock internals (the fallback priority, RawHandler._handle), hence the pin.
"""

from __future__ import annotations

import asyncio
import copy
import importlib.metadata
import threading
import uuid
from collections import deque
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import attrs
import kmock
from kmock._internal import apps
from kmock._internal.rendering import Response

from tests.support import kube_api_rules as rules
from tests.support.kube_api_rules import BUDGETS, KINDS, PODS, Kind
from tests.support.kube_emulator_auth import TokenAuthority
from tests.support.kube_emulator_schema import SchemaRefusalError, admitted, has_schema
from tests.support.kube_emulator_setup import ClusterSetup

KMOCK_PINNED = "0.8"
if importlib.metadata.version("kmock") != KMOCK_PINNED:  # it leans on kmock internals
    raise ImportError(f"tests.support.kube_emulator extends kmock {KMOCK_PINNED} exactly")

JSON = dict[str, Any]
TOKENREVIEWS = ("authentication.k8s.io", "v1", "tokenreviews")
Key = tuple[Kind, str | None, str]
_JSON_HEADERS = {"Content-Type": "application/json"}
CUSTOM_GROUP = "brupop.bottlerocket.aws"
# kube-apiserver's 410 for a continue token whose snapshot etcd has compacted away.
CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter."
)
# kube-apiserver's 415 for a strategic merge patch on a custom resource (it has no patch strategy).
CUSTOM_PATCH_TYPES = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _error(code: int, reason: str, message: str, details: JSON | None = None) -> Response:
    body = rules.status_body(code, reason, message, details)
    return Response(status=code, payload=body, headers=_JSON_HEADERS)


@attrs.define(kw_only=True)
class KubeEmulator(ClusterSetup, kmock.KubernetesEmulator):
    """The kube-apiserver, as far as brupop's adapters can tell, in one process."""

    history_limit: int = 1000
    _state: threading.RLock = attrs.field(factory=threading.RLock, init=False)
    _store: dict[Key, JSON] = attrs.field(factory=dict, init=False)
    # A fresh cluster has done some writes already: its versions never start at "0" (= "any").
    _revision: int = attrs.field(default=100, init=False)
    _history: deque[tuple[int, Kind, JSON]] = attrs.field(factory=deque, init=False)
    _compacted: int = attrs.field(default=0, init=False)
    # etcd's compaction (only `compact()`): older list snapshots, and so continue tokens, expire.
    _etcd_compacted: int = attrs.field(default=0, init=False)
    _watch_epoch: int = attrs.field(default=0, init=False)
    _open_watches: dict[int, int] = attrs.field(factory=dict, init=False)
    _watches_closed: threading.Condition = attrs.field(init=False)
    # Watches waiting for the next change, each woken on its own loop (never polled).
    _waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = attrs.field(
        factory=list, init=False
    )
    tokens: TokenAuthority = attrs.field(factory=TokenAuthority, init=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self._watches_closed = threading.Condition(self._state)
        self.tokens.pod_lookup = lambda namespace, name: self.stored(PODS, namespace, name)
        for kind in KINDS.values():
            info = self.resources[f"{kind.api_version}/{kind.plural}"]
            info.kind, info.namespaced = kind.kind, kind.namespaced
        # Above kmock's own fallbacks, below every reaction a test registers.
        (self.fallback**1)[self._is_resource_request] << self._serve

    async def _handle(self, request: kmock.Request) -> Any:
        # kmock persists writes before reactions run; here only _serve changes state, so a
        # reaction a test registers (a 429, a 500) leaves the cluster as it was.
        return await apps.RawHandler._handle(self, request)

    # --- what tests call (any thread) -------------------------------------------------

    @property
    def requests(self) -> list[kmock.Request]:
        return list(self)

    def put_object(self, kind: Kind, obj: JSON) -> JSON:
        """Create or overwrite an object as a controller or kubelet would (no HTTP)."""
        meta = obj.setdefault("metadata", {})
        key = (kind, meta.get("namespace") if kind.namespaced else None, meta["name"])
        with self._state:
            old = self._store.get(key)
            stored = self._prepared(kind, obj, old)
            return self._commit(key, stored, "MODIFIED" if old else "ADDED")

    def stored(self, kind: Kind, namespace: str | None, name: str) -> JSON | None:
        with self._state:
            found = self._store.get((kind, namespace, name))
            return copy.deepcopy(found) if found else None

    def objects_of(self, kind: Kind) -> list[JSON]:
        """Every stored object of `kind`, oldest change first."""
        with self._state:
            found = [copy.deepcopy(obj) for (k, _, _), obj in self._store.items() if k is kind]
        return sorted(found, key=lambda obj: int(obj["metadata"]["resourceVersion"]))

    def remove_object(self, kind: Kind, namespace: str | None, name: str) -> None:
        with self._state:
            self._delete((kind, namespace, name))

    def compact(self) -> None:
        """Forget the history so far: watching from any older resourceVersion, or continuing
        a list begun before, gives 410."""
        with self._state:
            self._history.clear()
            self._compacted = self._revision  # watching from the current version still works
            self._etcd_compacted = self._revision

    def drop_watches(self) -> None:
        """End every open watch stream, as a load balancer or apiserver restart would; returns
        once they have ended, so changes made next reach only a resumed watch."""
        with self._watches_closed:
            self._watch_epoch += 1
            self._wake_watches()
            ended = self._watches_closed.wait_for(
                lambda: not any(n for epoch, n in self._open_watches.items() if n), timeout=5
            )
        if not ended:
            raise RuntimeError("watch streams did not end")

    # --- storage ---------------------------------------------------------------------------

    def _prepared(self, kind: Kind, obj: JSON, old: JSON | None) -> JSON:
        """Fill the server-owned metadata, as the apiserver does on every write."""
        new = copy.deepcopy(obj)
        new.setdefault("apiVersion", kind.api_version)
        new.setdefault("kind", kind.kind)
        meta = new.setdefault("metadata", {})
        old_meta = (old or {}).get("metadata", {})
        meta["uid"] = old_meta.get("uid") or meta.get("uid") or str(uuid.uuid4())
        meta["creationTimestamp"] = old_meta.get("creationTimestamp") or _now()
        spec_changed = old is None or rules.spec_content(old) != rules.spec_content(new)
        meta["generation"] = old_meta.get("generation", 0) + (1 if spec_changed else 0)
        meta.pop("resourceVersion", None)
        return new

    def _commit(self, key: Key, obj: JSON, event: str) -> JSON:
        old = self._store.get(key)
        if old is not None and rules.without_version(old) == rules.without_version(obj):
            return copy.deepcopy(old)  # a no-op write keeps its resourceVersion, as in Kubernetes
        self._revision += 1
        obj["metadata"]["resourceVersion"] = str(self._revision)
        self._store[key] = obj
        self._remember(key[0], event, obj, before=old)
        return copy.deepcopy(obj)

    def _delete(self, key: Key) -> JSON:
        obj = self._store.pop(key)
        self._revision += 1
        obj["metadata"]["resourceVersion"] = str(self._revision)
        self._remember(key[0], "DELETED", obj)
        return copy.deepcopy(obj)

    def _remember(self, kind: Kind, event: str, obj: JSON, before: JSON | None = None) -> None:
        """One change for the watches; `before`, what a MODIFIED object was (so a selected
        watch can tell an object that left its selection from one that was never in it)."""
        change = {"type": event, "object": copy.deepcopy(obj)}
        if before is not None:
            change[_BEFORE] = copy.deepcopy(before)
        self._history.append((self._revision, kind, change))
        while len(self._history) > self.history_limit:
            self._compacted = self._history.popleft()[0]
        self._wake_watches()

    def _wake_watches(self) -> None:
        """Wake every waiting watch (called under `_state`, from any thread)."""
        waiters, self._waiters = self._waiters, []
        for loop, waiter in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_settle, waiter)

    # --- HTTP --------------------------------------------------------------------------------

    @staticmethod
    def _is_resource_request(request: kmock.Request) -> bool:
        return request.resource is not None and request.resource.plural is not None

    def _serve(self, request: kmock.Request) -> Response:
        # Always a full Response: kmock copies a returned Response's status onto the reaction,
        # so a bare payload would inherit the status of the previous request.
        result = self._dispatch(request)
        if isinstance(result, Response):
            return result
        return Response(status=200, payload=result, headers=_JSON_HEADERS)

    def _dispatch(self, request: kmock.Request) -> Any:
        resource = request.resource
        assert resource is not None and resource.plural is not None
        route = (resource.group or "", resource.version or "", resource.plural)
        method = str(request.method.value).upper()
        if route == TOKENREVIEWS and method == "POST":
            return Response(
                status=201, payload=self.tokens.review(request.data), headers=_JSON_HEADERS
            )
        kind = KINDS.get(route)
        if kind is None:
            return _error(404, "NotFound", "the server could not find the requested resource")
        key: Key = (kind, request.namespace if kind.namespaced else None, request.name or "")
        sub = request.subresource
        with self._state:
            if method == "GET" and request.name is None:
                if str(request.params.get("watch", "")).lower() in ("true", "1"):
                    return self._watch(kind, request)
                return self._list(kind, request)
            if method == "POST" and request.name is None:
                return self._create(kind, request)
            if key not in self._store:
                return _not_found(kind, key[2])
            if method == "GET" and sub in (None, "status"):
                return copy.deepcopy(self._store[key])
            if method == "POST" and kind is PODS and sub == "eviction":
                return self._evict(key)
            if method in ("PUT", "PATCH") and sub in (None, "status"):
                return self._update(kind, key, request, method)
            if method == "DELETE" and sub is None:
                refusal = _failed_precondition(kind, key, self._store[key], request.data)
                return refusal if refusal is not None else self._delete(key)
        return _error(405, "MethodNotAllowed", f"{method} is not supported on this path")

    def _list(self, kind: Kind, request: kmock.Request) -> Any:
        metadata_only = rules.metadata_only_wanted(_header(request, "Accept"))
        if metadata_only is None:
            return _error(406, "NotAcceptable", rules.NOT_ACCEPTABLE)
        try:
            keep = _selection(request)
        except rules.SelectorError as error:
            return _error(400, "BadRequest", str(error))
        items = [
            copy.deepcopy(obj)
            for (k, namespace, _), obj in sorted(self._store.items(), key=_by_namespace_and_name)
            if k is kind
            and (request.namespace is None or namespace == request.namespace)
            and keep(obj)
        ]
        metadata: JSON = {"resourceVersion": str(self._revision)}
        limit = int(request.params.get("limit") or 0)
        if request.params.get("resourceVersion") == "0" and "continue" not in request.params:
            limit = 0  # kube-apiserver answers from its watch cache in one piece (1.37)
        if limit > 0:
            # A continue token carries the first page's version and where the next page starts
            # (the apiserver serves a snapshot; this emulator pages over its current state).
            token = str(request.params.get("continue") or "")
            version, _, start = token.partition(":")
            if token and not (version.isdigit() and start.isdigit()):
                return _error(400, "BadRequest", f"invalid continue token: {token[:40]!r}")
            if token and int(version) < self._etcd_compacted:
                return _error(410, "Expired", CONTINUE_EXPIRED)
            offset = int(start or 0)
            metadata["resourceVersion"] = version or metadata["resourceVersion"]
            if offset + limit < len(items):
                metadata["continue"] = f"{metadata['resourceVersion']}:{offset + limit}"
            items = items[offset : offset + limit]
        answer = {
            "apiVersion": kind.api_version,
            "kind": f"{kind.kind}List",
            "metadata": metadata,
            "items": items,
        }
        return rules.metadata_only(answer) if metadata_only else answer

    def _create(self, kind: Kind, request: kmock.Request) -> Any:
        body = request.data
        if not isinstance(body, dict) or not body.get("metadata", {}).get("name"):
            return _error(422, "Invalid", f"{kind.kind} is invalid: metadata.name: Required value")
        namespace = body["metadata"].get("namespace") or request.namespace
        if kind.namespaced:
            body["metadata"]["namespace"] = namespace
        key: Key = (kind, namespace if kind.namespaced else None, body["metadata"]["name"])
        if key in self._store:
            return _error(
                409,
                "AlreadyExists",
                f'{kind.qualified} "{key[2]}" already exists',
                {"name": key[2], "group": kind.group, "kind": kind.plural},
            )
        if kind.has_status and kind.group == CUSTOM_GROUP:
            body.pop("status", None)  # a CRD with a status subresource ignores status on create
        try:
            body = self._admitted(kind, body, None, status_only=False)
        except SchemaRefusalError as error:
            return _error(422, "Invalid", str(error))
        created = self._commit(key, self._prepared(kind, body, None), "ADDED")
        return Response(status=201, payload=created, headers=_JSON_HEADERS)

    def _update(self, kind: Kind, key: Key, request: kmock.Request, method: str) -> Any:
        current = self._store[key]
        content_type = _header(request, "Content-Type")
        if kind.group == CUSTOM_GROUP and "strategic-merge-patch" in content_type:
            return _error(415, "UnsupportedMediaType", CUSTOM_PATCH_TYPES)
        try:
            wanted = (
                copy.deepcopy(request.data)
                if method == "PUT"
                else rules.apply_patch(content_type, current, request.data)
            )
        except (ValueError, TypeError, LookupError) as error:
            code = 415 if "Content-Type" in str(error) else 400
            return _error(code, "UnsupportedMediaType" if code == 415 else "BadRequest", str(error))
        if not isinstance(wanted, dict):
            return _error(400, "BadRequest", "the body is not a JSON object")
        expected = (wanted.get("metadata") or {}).get("resourceVersion")
        if method == "PUT" and not expected and kind.group == CUSTOM_GROUP:
            # custom resources refuse unconditional updates; built-in kinds allow them
            return _error(
                422,
                "Invalid",
                "metadata.resourceVersion: Invalid value: 0: must be specified for an update",
            )
        if expected and expected != current["metadata"]["resourceVersion"]:
            return _error(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {kind.qualified} "{key[2]}": the object has '
                "been modified; please apply your changes to the latest version and try again",
                {"name": key[2], "group": kind.group, "kind": kind.plural},
            )
        if kind.has_status:
            wanted = rules.split_status(
                current, wanted, status_only=request.subresource == "status"
            )
        wanted.setdefault("metadata", {}).update(
            {"name": key[2], **({"namespace": key[1]} if kind.namespaced else {})}
        )
        try:
            status_only = request.subresource == "status"
            wanted = self._admitted(kind, wanted, current, status_only=status_only)
        except SchemaRefusalError as error:
            return _error(422, "Invalid", str(error))
        return self._commit(key, self._prepared(kind, wanted, current), "MODIFIED")

    @staticmethod
    def _admitted(kind: Kind, obj: JSON, old: JSON | None, *, status_only: bool) -> JSON:
        """A custom resource pruned and validated against its CRD, as kube-apiserver does."""
        if not has_schema(kind):
            return obj
        return admitted(kind, obj, old, status_only=status_only)

    def _evict(self, key: Key) -> Any:
        pod = self._store[key]
        budgets = [
            budget
            for (kind, _, _), budget in self._store.items()
            if kind is BUDGETS and rules.budget_selects(budget, pod)
        ]
        if len(budgets) > 1:
            return _error(
                500,
                "InternalError",
                "This pod has more than one PodDisruptionBudget, which the eviction subresource "
                "does not support.",
            )
        for budget in budgets:
            selected = [
                other
                for (kind, _, _), other in self._store.items()
                if kind is PODS and rules.budget_selects(budget, other)
            ]
            refusal = rules.budget_refusal(budget, selected)
            if refusal is not None:
                return _error(
                    429,
                    "TooManyRequests",
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                    {"causes": [{"reason": "DisruptionBudget", "message": refusal}]},
                )
        self._delete(key)
        body = rules.status_body(201, "", "")
        return Response(status=201, payload=body, headers=_JSON_HEADERS)

    async def _watch(self, kind: Kind, request: kmock.Request) -> AsyncIterator[Any]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + float(request.params.get("timeoutSeconds") or 1800)
        keep = _selection(request)
        start = request.params.get("resourceVersion") or ""
        with self._state:
            epoch = self._watch_epoch
            self._open_watches[epoch] = self._open_watches.get(epoch, 0) + 1
        try:
            yield b""  # send the headers now, as the apiserver does
            async for event in self._watch_events(kind, request, keep, start, epoch, deadline):
                yield event
        finally:
            with self._watches_closed:
                self._open_watches[epoch] -= 1
                self._watches_closed.notify_all()

    def _changes_after(self, since: int, kind: Kind) -> list[JSON]:
        """The changes of `kind` after revision `since`, oldest first; read from the newest end,
        so a watch that polls often costs what is new, not the whole history (under load, a
        scan of it per watch every few milliseconds starved the event loop)."""
        fresh: list[JSON] = []
        if self._revision <= since:
            return fresh
        for revision, changed, event in reversed(self._history):
            if revision <= since:
                break
            if changed is kind:
                fresh.append(event)
        fresh.reverse()
        return fresh

    async def _watch_events(
        self, kind: Kind, request: kmock.Request, keep: Any, start: str, epoch: int, deadline: float
    ) -> AsyncIterator[JSON]:
        namespace = request.namespace
        selected = bool(request.params.get("labelSelector"))
        with self._state:
            if start in ("", "0"):
                since = self._revision
                pending: list[JSON] = [
                    {"type": "ADDED", "object": copy.deepcopy(obj)}
                    for (k, ns, _), obj in self._store.items()
                    if k is kind and (namespace is None or ns == namespace) and keep(obj)
                ]
            elif not start.isdigit() or int(start) < self._compacted:
                message = f"too old resource version: {start} ({self._compacted})"
                since, pending = (
                    -1,
                    [{"type": "ERROR", "object": rules.status_body(410, "Expired", message)}],
                )
            else:
                since, pending = int(start), []
        for event in pending:
            yield event
        if since < 0:
            return
        loop = asyncio.get_running_loop()
        # Like kube-apiserver's watch cache: one bookmark 2 s before the timeout (none for a
        # shorter watch), when the revision moved during the watch.
        bookmark_at = deadline - 2.0 if loop.time() < deadline - 2.0 else None
        bookmarks = str(request.params.get("allowWatchBookmarks", "")).lower() in ("true", "1")
        told = since
        while True:
            waiter: asyncio.Future[None] = loop.create_future()
            with self._state:
                fresh = self._changes_after(since, kind)
                since, dropped = self._revision, self._watch_epoch != epoch
                self._waiters.append((loop, waiter))  # under the lock: no change slips by
            for event in fresh:
                obj = event["object"]
                in_namespace = namespace is None or obj["metadata"].get("namespace") == namespace
                if in_namespace and keep(obj):
                    yield {"type": event["type"], "object": obj}
                elif in_namespace and selected and keep(event.get(_BEFORE) or {}):
                    # The apiserver tells a selected watch that an object left the selection.
                    yield {"type": "DELETED", "object": obj}
            if bookmarks and bookmark_at is not None and loop.time() >= bookmark_at:
                bookmark_at = None
                if since > told:
                    yield _bookmark(kind, since)
            if dropped or loop.time() >= deadline:
                return
            wake_at = min(deadline, bookmark_at or deadline)
            await asyncio.wait({waiter}, timeout=max(0.0, wake_at - loop.time()))


def _settle(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


_BEFORE = "previous"
"""Where a remembered MODIFIED change keeps the object as it was (never sent)."""


def _bookmark(kind: Kind, revision: int) -> JSON:
    """A BOOKMARK event: an object of `kind` with only its resourceVersion."""
    meta = {"resourceVersion": str(revision)}
    return {"type": "BOOKMARK", "object": {"kind": kind.kind, "metadata": meta}}


def _by_namespace_and_name(item: tuple[Key, JSON]) -> tuple[str, str]:
    return (item[0][1] or "", item[0][2])


def _selection(request: kmock.Request) -> Any:
    labels = rules.label_matcher(request.params.get("labelSelector"))
    fields = rules.field_matcher(request.params.get("fieldSelector"))
    return lambda obj: labels(obj.get("metadata", {}).get("labels") or {}) and fields(obj)


def _not_found(kind: Kind, name: str) -> Response:
    details = {"name": name, "group": kind.group, "kind": kind.plural}
    return _error(404, "NotFound", f'{kind.qualified} "{name}" not found', details)


def _header(request: kmock.Request, name: str) -> str:
    for key, value in request.headers.items():
        if key.lower() == name.lower():
            return str(value)
    return ""


def _failed_precondition(kind: Kind, key: Key, current: JSON, options: object) -> Any:
    """The 409 a DELETE gets when its `preconditions.resourceVersion` is not the object's."""
    wanted = (options.get("preconditions") or {}) if isinstance(options, dict) else {}
    expected = wanted.get("resourceVersion") if isinstance(wanted, dict) else None
    actual = current["metadata"]["resourceVersion"]
    if expected is None or expected == actual:
        return None
    return _error(
        409,
        "Conflict",
        f"Precondition failed: ResourceVersion in precondition: {expected}, "
        f"ResourceVersion in object meta: {actual}",
        {"name": key[2], "group": kind.group, "kind": kind.plural},
    )
