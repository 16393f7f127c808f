"""etcd's administration through its JSON gateway (`/v3/...` on the client port, loopback
only): the current revision, and a compaction up to it, after which kube-apiserver answers a
watch or a continued list from an older resourceVersion with 410 Gone."""

from __future__ import annotations

import base64
import json
import urllib.request
from typing import Any

from tests.support.control_plane.components import Ports

TIMEOUT_SECONDS = 10.0
REGISTRY_PREFIX = b"/registry/"  # every key kube-apiserver writes


def _post(ports: Ports, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{ports.etcd_client}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
        parsed: dict[str, Any] = json.loads(answer.read())
    return parsed


def revision(ports: Ports) -> int:
    """etcd's current revision (a range read of one key reports it in its header)."""
    key = base64.b64encode(REGISTRY_PREFIX).decode()
    answer = _post(ports, "/v3/kv/range", {"key": key, "limit": 1, "keys_only": True})
    return int(answer["header"]["revision"])


def compact(ports: Ports) -> int:
    """Compact etcd's history up to its current revision (physically: the old revisions are
    gone when this returns); that revision."""
    now = revision(ports)
    _post(ports, "/v3/kv/compaction", {"revision": str(now), "physical": True})
    return now
