"""The `/crdconvert` floods of abuse_attacks.py, and what a shadow's own review waits meanwhile.

Clients without a token post big ConversionReviews in a loop: objects of a minimal shadow by the
megabyte (the floods since issue 14), or 1,000 objects each the size of a real shadow, about
1.9 MB in all, under the 2 MiB body limit that issue 29 set (`crdconvert_shadow_sized`). During
each flood a review of one shadow, as kube-apiserver sends when it reads a stored object, is
posted from 127.0.0.1 one after the other, to the webhook port where the chart has
kube-apiserver call: how long each took and what it got (issue 29 found one waiting more than
30 s behind 5.9 MiB reviews). Each flood first times a few such reviews with no flood.
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

HOST = "127.0.0.1"
QUIET_REVIEWS = 5
# Longest a one-shadow review is waited for (it waited more than 30 s in issue 29's finding).
ONE_SHADOW_TIMEOUT = 45.0
SHADOW_OBJECT_BYTES = 1_900  # a shadow with its managedFields, compact (1.5 to 2 KB in a cluster)


class Target(Protocol):
    """What abuse_attacks.Target offers these attacks."""

    port: int
    webhook_port: int | None
    context: ssl.SSLContext

    def left(self) -> float: ...


def crdconvert_flood(
    target: Target, *, body: bytes, clients: int = 6, spread: bool = False
) -> dict[str, Any]:
    """`clients` clients posting `body` to `/crdconvert` in a loop until the time is up: on the
    agents' port from 127.0.0.1, or (`spread`) on the webhook port from 127.0.0.2 and up, one
    address each. Meanwhile one-shadow reviews are timed."""
    quiet = _time_one_shadow_reviews(target, QUIET_REVIEWS)
    port = (target.webhook_port or target.port) if spread else target.port
    statuses: Counter[str] = Counter()

    def one(index: int) -> None:
        source = f"127.0.0.{index + 2}" if spread else None
        connection = _connection(target, port, source, timeout=30.0)
        while target.left() > 0:
            statuses[_post(connection, body)] += 1
            connection.close()  # a new connection for each review

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    time.sleep(min(0.5, max(0.0, target.left())))  # the flood under way first
    during = _time_one_shadow_reviews(target, None)
    for thread in threads:
        thread.join()
    return {
        "clients": clients,
        "port": "webhook" if spread and target.webhook_port else "agents",
        "body_bytes": len(body),
        "objects": len(json.loads(body)["request"]["objects"]),
        "statuses": dict(statuses),
        "one_shadow_review_quiet": quiet,
        "one_shadow_review_during": during,
    }


def _time_one_shadow_reviews(target: Target, count: int | None) -> dict[str, Any]:
    """Post one-shadow reviews one after the other (`count` of them, or until the time is up),
    each on a new connection to the webhook port: their statuses and times."""
    body = review_of([shadow_object(0)])
    port = target.webhook_port or target.port
    took: list[float] = []
    statuses: Counter[str] = Counter()
    while (count is None and target.left() > 0) or (count is not None and len(took) < count):
        connection = _connection(target, port, None, timeout=ONE_SHADOW_TIMEOUT)
        started = time.perf_counter()
        status = _post(connection, body)
        took.append(time.perf_counter() - started)
        statuses[status] += 1
        connection.close()
    took.sort()
    return {
        "reviews": len(took),
        "statuses": dict(statuses),
        "median_s": round(took[len(took) // 2], 3) if took else None,
        "max_s": round(took[-1], 3) if took else None,
        "over_1_s": sum(1 for value in took if value > 1.0),
    }


def _connection(
    target: Target, port: int, source: str | None, timeout: float
) -> http.client.HTTPSConnection:
    return http.client.HTTPSConnection(
        HOST,
        port,
        context=target.context,
        timeout=timeout,
        source_address=(source, 0) if source else None,
    )


def _post(connection: http.client.HTTPSConnection, body: bytes) -> str:
    try:
        connection.request(
            "POST", "/crdconvert", body=body, headers={"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        response.read()
        return str(response.status)
    except TimeoutError:
        connection.close()
        return "no answer in time"
    except (OSError, http.client.HTTPException) as error:
        connection.close()
        return type(error).__name__


def review_of(objects: list[dict[str, Any]]) -> bytes:
    """A ConversionReview of `objects` to v2, compact, as kube-apiserver writes it."""
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "abuse",
            "desiredAPIVersion": "brupop.bottlerocket.aws/v2",
            "objects": objects,
        },
    }
    return json.dumps(review, separators=(",", ":")).encode()


def minimal_review(size: int) -> bytes:
    """A review of `size` bytes or so, of the smallest v1 shadow repeated."""
    shadow = {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketShadow",
        "metadata": {"name": "brs-node", "namespace": "brupop-bottlerocket-aws"},
        "spec": {"state": "Idle", "state_transition_timestamp": None, "version": None},
    }
    one = len(json.dumps(shadow)) + 2
    review = json.loads(review_of([]))
    review["request"]["objects"] = [shadow] * (size // one)
    return json.dumps(review).encode()


def shadow_object(index: int) -> dict[str, Any]:
    """A v1 shadow as kube-apiserver stores it (managedFields of the agent and the controller),
    padded to SHADOW_OBJECT_BYTES compact."""
    name = f"brs-ip-10-0-{index // 250}-{index % 250}.us-west-2.compute.internal"
    fields: dict[str, Any] = {"f:status": {".": {}, "f:current_state": {}, "f:current_version": {}}}
    shadow: dict[str, Any] = {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketShadow",
        "metadata": {
            "name": name,
            "namespace": "brupop-bottlerocket-aws",
            "uid": f"5f0c6a1e-0000-4000-8000-{index:012d}",
            "resourceVersion": str(1_000_000 + index),
            "generation": 3,
            "creationTimestamp": "2026-11-30T08:00:00Z",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": name[4:], "uid": f"n-{index}"}
            ],
            "managedFields": [
                {"manager": "brupop-agent", "operation": "Update", "fieldsV1": fields},
                {
                    "manager": "brupop-controller",
                    "operation": "Update",
                    "fieldsV1": {"f:spec": {".": {}, "f:state": {}, "f:version": {}}},
                },
            ],
            "annotations": {},
        },
        "spec": {"state": "Idle", "state_transition_timestamp": None, "version": "1.20.3"},
        "status": {
            "current_version": "1.20.3",
            "target_version": "1.21.0",
            "current_state": "Idle",
        },
    }
    size = len(json.dumps(shadow, separators=(",", ":")))
    shadow["metadata"]["annotations"]["note"] = "x" * max(0, SHADOW_OBJECT_BYTES - size - 10)
    return shadow


def shadow_sized_review(objects: int = 1000) -> bytes:
    """`objects` shadow-sized objects in one review: about 1.9 MB for 1,000."""
    return review_of([shadow_object(index) for index in range(objects)])


CONVERSION_ATTACKS: dict[str, Callable[[Any], dict[str, Any]]] = {
    # 8 MB reviews: over every body limit brupop had (6 MiB, then 2 MiB since issue 29): 413.
    "crdconvert_flood": lambda t: crdconvert_flood(t, body=minimal_review(8_000_000)),
    # 5 MB and 6.2 MB: converted under the 6 MiB limit before issue 29 (6.2 MB gave the worker's
    # peak), refused 413 at once under the 2 MiB limit since.
    "crdconvert_flood_5mb": lambda t: crdconvert_flood(t, body=minimal_review(5_000_000)),
    "crdconvert_flood_6mb": lambda t: crdconvert_flood(t, body=minimal_review(6_200_000)),
    # Issue 29: four clients without a token, each from its own address, on the webhook port,
    # with the largest reviews the bounds admit (1,000 shadow-sized objects, under 2 MiB).
    "crdconvert_shadow_sized": lambda t: crdconvert_flood(
        t, body=shadow_sized_review(), clients=4, spread=True
    ),
}
