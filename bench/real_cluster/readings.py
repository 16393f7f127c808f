"""What the rig reads from the running system: kube-apiserver's and etcd's /metrics, each
brupop process's /metrics, and the cost of a relist (a full paged list of shadows and Nodes,
as the controller's resync makes it)."""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from typing import Any

from brupop.adapters.kubernetes.resources.shadow_objects import GROUP, PLURAL, VERSION
from brupop.simulation.fleet.real_cluster.connection import ClusterAccess
from real_cluster.fleet import NAMESPACE

PAGE = 500


def kube_metrics(access: ClusterAccess) -> str:
    return _get(access, "/metrics").decode()


def _get(access: ClusterAccess, path: str) -> bytes:
    response = access.admin.call_api(
        path, "GET", auth_settings=["BearerToken"], _preload_content=False, _request_timeout=60
    )
    answer = response[0] if isinstance(response, tuple) else response
    return bytes(answer.data)


def http_text(url: str, ca: str | None = None, seconds: float = 10.0, tries: int = 3) -> str:
    """The body at `url`; a connect or handshake that times out is tried again (a replica
    holding thousands of agents on a loaded machine can be slow to accept a scrape)."""
    context = ssl.create_default_context(cafile=ca) if ca else None
    for attempt in range(tries):
        try:
            with urllib.request.urlopen(url, timeout=seconds, context=context) as answer:
                return str(answer.read().decode())
        except (urllib.error.URLError, TimeoutError):
            if attempt == tries - 1:
                raise
    raise AssertionError("unreachable")


def relist(access: ClusterAccess, path: str) -> dict[str, Any]:
    """Time, bytes, pages and items of a full paged list of `path` (pages of 500, read
    quorum, as a list without resourceVersion is)."""
    began, total, pages, items, token = time.perf_counter(), 0, 0, 0, ""
    while True:
        query = f"?limit={PAGE}" + (f"&continue={token}" if token else "")
        body = _get(access, path + query)
        total, pages = total + len(body), pages + 1
        page = json.loads(body)
        items += len(page.get("items", []))
        token = page.get("metadata", {}).get("continue", "")
        if not token:
            break
    return {"seconds": round(time.perf_counter() - began, 3), "bytes": total, "pages": pages,
            "items": items}  # fmt: skip


def relist_costs(access: ClusterAccess) -> dict[str, Any]:
    shadows = f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{PLURAL}"
    return {"shadows": relist(access, shadows), "nodes": relist(access, "/api/v1/nodes")}


def informer_lists(log_path: Any) -> dict[str, Any]:
    """The lists a controller's informers made, from its log's `watch.listed` lines: per kind
    and way (`versions`: a resync by versions; `objects`: a whole list, as at start), how many
    and the CPU of each on the thread that made it."""
    lists: dict[str, list[float]] = {}
    with open(log_path, errors="replace") as lines:
        for line in lines:
            if '"watch.listed"' not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            key = f"{entry.get('kind')} by {entry.get('by')}"
            lists.setdefault(key, []).append(float(entry.get("cpu_ms", "nan")))
    return {
        key: {"count": len(cpu), "cpu_ms": cpu, "max_cpu_ms": max(cpu)}
        for key, cpu in sorted(lists.items())
    }
