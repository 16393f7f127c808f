"""Attacks of abuse_attacks.py that cost the cluster behind the apiserver (issue 29): one agent
writing its status as fast as it is answered, and the token of a deleted pod replayed.

Each counts what the bench's fake cluster was asked meanwhile (cluster_calls.py): status writes
stored (what etcd would write) and pod GETs (what kube-apiserver would serve), besides the
answers by status code. Bounded by a count of requests and by the attack's time.
"""

from __future__ import annotations

import http.client
import json
import ssl
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from cluster_calls import calls_between, settled_calls

HOST = "127.0.0.1"
RESOURCE = "/bottlerocket-node-resource"
# Nodes of the bench's cluster these attacks act as: 0 is the probe's, 1 to 6 other attacks'.
IDENTICAL_NODE = 7
CHANGING_NODES = (8, 9)  # as fast as answered; spread over the attack's time


class Target(Protocol):
    """What abuse_attacks.Target offers these attacks."""

    port: int
    nodes: list[dict[str, str]]
    gone_nodes: list[dict[str, str]]
    work: Path

    def left(self) -> float: ...

    def https(self) -> http.client.HTTPSConnection: ...


def status_writes(
    target: Target, *, changing: bool, spread: bool = False, count: int = 300
) -> dict[str, Any]:
    """One agent PUTs its status `count` times on one keep-alive connection, each as soon as the
    last is answered (or, `spread`, evenly over the attack's time): the same report each time,
    or (`changing`) one whose crash_count grows."""
    node = target.nodes[CHANGING_NODES[spread] if changing else IDENTICAL_NODE]
    headers = agent_headers(node)
    connection = target.https()
    before = settled_calls(target.work)
    statuses: Counter[str] = Counter()
    started = time.monotonic()
    every = max(0.0, target.left() - 1.0) / count if spread else 0.0
    for index in range(count):
        if target.left() <= 0:
            break
        time.sleep(max(0.0, started + index * every - time.monotonic()))
        body = status_body(crash_count=index + 1 if changing else 0)
        statuses[request(connection, "PUT", body, headers)] += 1
    took = time.monotonic() - started
    writes = calls_between(before, settled_calls(target.work)).get("shadow_status_writes", 0)
    stored = stored_status(connection, headers)
    connection.close()
    return {
        "node": node["name"],
        "reports": "changing (crash_count 1, 2, ...)" if changing else "identical",
        "sent": f"evenly over {every * count:.1f} s" if spread else "each once the last answered",
        "puts": sum(statuses.values()),
        "put_seconds": round(took, 2),
        "statuses": dict(statuses),
        "status_writes_stored": writes,
        "stored_writes_per_second": round(writes / took, 1) if took else None,
        "stored_crash_count_at_end": stored.get("crash_count"),
    }


def gone_pod_replay(target: Target, count: int = 200) -> dict[str, Any]:
    """The token of an agent whose pod was deleted, replayed `count` times (one GET of its
    shadow each, on one keep-alive connection): the answers and the pod GETs they cost."""
    if not target.gone_nodes:
        return {"skipped": "the server has no node whose pod was deleted"}
    node = target.gone_nodes[0]
    headers = agent_headers(node)
    connection = target.https()
    before = settled_calls(target.work)
    statuses: Counter[str] = Counter()
    started = time.monotonic()
    for _ in range(count):
        if target.left() <= 0:
            break
        statuses[request(connection, "GET", None, headers)] += 1
    took = time.monotonic() - started
    gets = calls_between(before, settled_calls(target.work)).get("pod_gets", 0)
    connection.close()
    return {
        "node": node["name"],
        "requests": sum(statuses.values()),
        "request_seconds": round(took, 2),
        "statuses": dict(statuses),
        "pod_gets": gets,
    }


def agent_headers(node: dict[str, str]) -> dict[str, str]:
    return {
        "BrupopNodeName": node["name"],
        "BrupopNodeUid": node["uid"],
        "BrupopK8sAuthToken": node["token"],
        "Content-Type": "application/json",
    }


def status_body(crash_count: int) -> bytes:
    status = {
        "current_version": "1.0.0",
        "target_version": "1.1.0",
        "current_state": "Idle",
        "crash_count": crash_count,
    }
    return json.dumps(status).encode()


def request(
    connection: http.client.HTTPSConnection,
    method: str,
    body: bytes | None,
    headers: dict[str, str],
) -> str:
    """The status of one request to the node's shadow (the error's type when none came)."""
    try:
        connection.request(method, RESOURCE, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return str(response.status)
    except (OSError, http.client.HTTPException, ssl.SSLError) as error:
        connection.close()
        return type(error).__name__


def stored_status(connection: http.client.HTTPSConnection, headers: dict[str, str]) -> Any:
    """The status the node's shadow holds now, as the apiserver serves it."""
    try:
        connection.request("GET", RESOURCE, headers=headers)
        shadow = json.loads(connection.getresponse().read())
    except (OSError, ValueError, http.client.HTTPException):
        return {}
    return shadow.get("status") or {}


AGENT_ATTACKS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "status_writes_identical": lambda t: status_writes(t, changing=False),
    "status_writes_changing": lambda t: status_writes(t, changing=True),
    "status_writes_changing_spread": lambda t: status_writes(t, changing=True, spread=True),
    "gone_pod_replay": gone_pod_replay,
}
