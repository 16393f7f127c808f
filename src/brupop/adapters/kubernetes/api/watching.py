"""List-then-watch over the Kubernetes API, resuming dropped streams from the last version.

A stream that ends early (apiserver restart, idle proxy) is reopened from the last
resourceVersion seen, so no change is missed. A version the apiserver has compacted away
(410 Gone, as an HTTP status or an ERROR event) raises WatchExpiredError: the caller re-lists.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

import structlog
import urllib3.exceptions

from brupop.adapters.kubernetes.api.calls import JSON, ApiCalls, collection_paused, lines
from brupop.adapters.kubernetes.api.errors import error_for_status, status_code
from brupop.adapters.kubernetes.api.version_pages import read_version_page
from brupop.domain.cluster.objects import (
    VersionListing,
    WatchBookmark,
    WatchEvent,
    WatchEventType,
)
from brupop.ports.errors import UnavailableError, WatchExpiredError

T = TypeVar("T")
log = structlog.get_logger(__name__)

MAX_QUIET_RECONNECTS = 5
"""Streams that end without a single event, in a row, before the watch gives up."""


@dataclass(frozen=True)
class WatchSource(Generic[T]):
    """What to watch: the client's list method and its arguments, and how to read an item."""

    action: str
    list_method: Callable[..., Any]
    decode: Callable[[JSON], T | None]
    args: tuple[Any, ...] = ()
    params: tuple[tuple[str, Any], ...] = ()


LIST_PAGE_SIZE = 500
"""Objects per list request: a 10k-Node list in one answer is 57 MiB of JSON, and decoding it
at once costs the controller about 290 MiB of peak memory it never gives back."""


LIST_RESTARTS = 2
"""Times a paged list starts again from its first page when a continue token expired (410):
a compaction between two pages leaves no snapshot to continue from."""


PageReader = Callable[[ApiCalls, WatchSource[Any], dict[str, Any], list[Any]], tuple[Any, str]]
"""Reads one page of a list onto its items; returns the continue token and the version."""


def list_items(
    calls: ApiCalls, source: WatchSource[T], page_size: int | None = None
) -> tuple[list[tuple[T, str | None]], str]:
    """Every readable item with its resourceVersion, and the list's resourceVersion; read in
    pages of `page_size` (one consistent snapshot, as the API serves continued lists). A
    continue token the API has expired restarts the list, as client-go's pager does."""
    return _restarted_list(calls, source, page_size, _read_page)


def _restarted_list(
    calls: ApiCalls, source: WatchSource[Any], page_size: int | None, read_page: PageReader
) -> tuple[list[Any], str]:
    for _ in range(LIST_RESTARTS):
        try:
            return _paged_list(calls, source, page_size, read_page)
        except WatchExpiredError:
            log.info("list.restarted", action=source.action)
    return _paged_list(calls, source, page_size, read_page)


def _paged_list(
    calls: ApiCalls, source: WatchSource[Any], page_size: int | None, read_page: PageReader
) -> tuple[list[Any], str]:
    items: list[Any] = []
    params = dict(source.params) | ({"limit": page_size} if page_size else {})
    while True:
        with collection_paused():  # until the page is dropped (see `_read_page`)
            token, version = read_page(calls, source, params, items)
        if not page_size or not token:
            return items, version
        params["_continue"] = str(token)


def _read_page(
    calls: ApiCalls, source: WatchSource[T], params: dict[str, Any], items: list[Any]
) -> tuple[Any, str]:
    """One page's items decoded onto `items`; its continue token and resourceVersion. Called
    with the collector paused: the parsed page is freed by reference counting when this
    returns, before any collection could move its objects into the older generations (at
    10,000 Nodes a fifth of a resync's CPU went to those collections)."""
    answer = calls.json(source.action, source.list_method, *source.args, **params)
    for raw in answer.get("items") or []:
        decoded = source.decode(raw)
        if decoded is not None:
            items.append((decoded, _version_of(raw)))
    meta = answer.get("metadata") or {}
    return meta.get("continue"), str(meta.get("resourceVersion") or "")


PARTIAL_METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
"""The Accept header that has kube-apiserver answer a list with each item's metadata only
(built-in kinds and custom resources alike): a Node's status, images included, is most of it."""

_LIST_QUERY = {"label_selector": "labelSelector", "limit": "limit", "_continue": "continue"}
"""The list parameters a metadata-only list takes, by the client's name, as the API names them."""


def list_versions(
    calls: ApiCalls, source: WatchSource[Any], path: str, page_size: int | None = None
) -> VersionListing:
    """The name and resourceVersion of every item of the collection at `path` (the URL path of
    `source`'s list), paged like `list_items`, asked for as metadata only and never decoded into
    the domain's (a resync of an unchanged fleet needs no more). Each page is read by
    `read_version_page`, which makes Python objects of those two strings only."""
    metadata_only = replace(source, list_method=_metadata_list(calls, path), args=())
    items, version = _restarted_list(calls, metadata_only, page_size, _read_version_page)
    return VersionListing(dict(items), version or None)


def _read_version_page(
    calls: ApiCalls, source: WatchSource[Any], params: dict[str, Any], items: list[Any]
) -> tuple[str, str]:
    body = calls.body(source.action, source.list_method, *source.args, **params)
    named, token, version = read_version_page(source.action, body)
    items.extend(named)
    return token, version


def _metadata_list(calls: ApiCalls, path: str) -> Callable[..., Any]:
    """A list call like the client's own, asking for metadata only: the client's generated
    methods always send an Accept header of their own, whatever `_headers` says."""
    api = calls.api_client

    def listing(
        *, _preload_content: bool = True, _request_timeout: Any = None, **params: Any
    ) -> Any:
        unknown = set(params) - set(_LIST_QUERY)
        if unknown:
            raise TypeError(f"a metadata-only list takes no {sorted(unknown)}")
        return api.call_api(
            path,
            "GET",
            query_params=[(_LIST_QUERY[name], value) for name, value in params.items()],
            header_params={"Accept": PARTIAL_METADATA_LIST},
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
            _preload_content=_preload_content,
            _request_timeout=_request_timeout,
        )

    return listing


def watch(
    calls: ApiCalls, source: WatchSource[T], resource_version: str | None, timeout_seconds: float
) -> Iterator[WatchEvent[T] | WatchBookmark]:
    """Changes after `resource_version` (None: every object as ADDED first) until the timeout,
    and the bookmarks the API sends, so the caller resumes from the newest version it knows
    even when nothing it watches changed."""
    deadline = time.monotonic() + max(timeout_seconds, 0.0)
    last = resource_version
    if last is None:
        items, last = list_items(calls, source)
        for item, version in items:
            yield WatchEvent(WatchEventType.ADDED, item, version)
    quiet = 0
    while (remaining := deadline - time.monotonic()) > 0:
        seen_before = last
        for event, version in _one_stream(calls, source, last, remaining, deadline):
            if event is not None:
                yield event
            elif version and version != last:
                yield WatchBookmark(version)
            last = version or last
        quiet = quiet + 1 if last == seen_before else 0
        if quiet >= MAX_QUIET_RECONNECTS:
            raise UnavailableError(f"{source.action}: the watch keeps ending without events")


def _one_stream(
    calls: ApiCalls, source: WatchSource[T], since: str, remaining: float, deadline: float
) -> Iterator[tuple[WatchEvent[T] | None, str]]:
    """One watch request; yields (event or None for a bookmark, its version) until it ends."""
    params = dict(source.params) | {
        "watch": True,
        "resource_version": since,
        "allow_watch_bookmarks": True,
        "timeout_seconds": max(1, math.ceil(remaining)),
    }
    response = calls.stream(source.action, source.list_method, remaining, *source.args, **params)
    try:
        for line in lines(response):
            yield from _decode_line(source, line)
            if time.monotonic() >= deadline:
                return
    except (urllib3.exceptions.HTTPError, OSError) as error:
        if time.monotonic() < deadline:
            log.info("watch.stream_dropped", action=source.action, since=since, error=str(error))
    finally:
        response.close()  # an unfinished stream must not go back to the connection pool
        response.release_conn()


def _decode_line(source: WatchSource[T], line: str) -> Iterator[tuple[WatchEvent[T] | None, str]]:
    try:
        event = json.loads(line)
        kind, obj = event["type"], event["object"]
    except (ValueError, KeyError, TypeError, RecursionError):
        raise UnavailableError(f"{source.action}: unreadable watch event {line[:200]!r}") from None
    if kind == "ERROR":
        status = obj if isinstance(obj, dict) else {}
        raise error_for_status(
            status_code(status.get("code"), default=500),
            str(status.get("reason") or ""),
            str(status.get("message") or ""),
            source.action,
        )
    version = _version_of(obj) or ""
    if kind == "BOOKMARK":
        yield None, version
        return
    decoded = source.decode(obj)
    if decoded is not None and kind in WatchEventType.__members__:
        yield WatchEvent(WatchEventType(kind), decoded, version), version
    else:
        yield None, version


def _version_of(obj: Any) -> str | None:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    version = meta.get("resourceVersion") if isinstance(meta, dict) else None
    return str(version) if version else None
