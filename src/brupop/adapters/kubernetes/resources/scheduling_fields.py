"""What the scheduler reads from `v1 Node` and `v1 Pod` objects, decoded into domain values:
taints and allocatable CPU/memory of a Node; requests, nodeSelector and tolerations of a Pod.

The API server validates these fields, so an unreadable one means a client or a version this
code does not know; it becomes "unknown" (allocatable None, `requests_known` False), never an
exception, and the capacity check then counts no room rather than guessing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from brupop.adapters.kubernetes.api.calls import JSON
from brupop.domain.cluster.quantity import QuantityError, cpu_millis, memory_bytes
from brupop.domain.cluster.resources import InitContainerRequest, Resources, effective_request
from brupop.domain.cluster.taints import EQUAL, Taint, Toleration
from brupop.domain.timestamps import rfc3339_or_none

MAX_INTERNED = 10_000
"""Distinct values kept for sharing. A census holds every pod of the cluster, and most pods
repeat a few tolerations and request sizes: sharing one copy of each roughly halves the memory
100k decoded pods take (1.06 KiB each without)."""

H = TypeVar("H")
_interned: dict[Any, Any] = {}


def interned(value: H) -> H:
    """One shared copy of an equal immutable value (a fresh one once the table is full)."""
    kept = _interned.get(value)
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    if len(_interned) < MAX_INTERNED:
        _interned[value] = value
    return value


def taints_of(spec: JSON) -> tuple[Taint, ...]:
    """The Node's `spec.taints`."""
    return tuple(
        Taint(
            key=str(item.get("key") or ""),
            value=str(item.get("value") or ""),
            effect=str(item.get("effect") or ""),
        )
        for item in _entries(spec.get("taints"))
    )


def allocatable_of(status: JSON) -> Resources | None:
    """The Node's allocatable CPU and memory; None when either is missing or unreadable."""
    allocatable = status.get("allocatable")
    if not isinstance(allocatable, dict):
        return None
    cpu, memory = allocatable.get("cpu"), allocatable.get("memory")
    if not isinstance(cpu, str) or not isinstance(memory, str):
        return None
    try:
        return Resources(cpu_millis(cpu), memory_bytes(memory))
    except QuantityError:
        return None


def timestamp_of(meta: JSON, field: str) -> datetime | None:
    """An RFC 3339 metadata timestamp; None when absent or unreadable."""
    return rfc3339_or_none(meta.get(field))


def requests_of(spec: JSON) -> Resources | None:
    """The Pod's effective request (see resources.effective_request); None when a container's
    request cannot be read."""
    try:
        containers = [_container_request(c) for c in _entries(spec.get("containers"))]
        init = [
            InitContainerRequest(_container_request(c), sidecar=c.get("restartPolicy") == "Always")
            for c in _entries(spec.get("initContainers"))
        ]
    except QuantityError:
        return None
    return interned(effective_request(containers, init))


def _container_request(container: JSON) -> Resources:
    resources = container.get("resources") or {}
    requests = (resources.get("requests") if isinstance(resources, dict) else None) or {}
    if not isinstance(requests, dict):
        raise QuantityError("resources.requests is not a map")
    cpu, memory = requests.get("cpu"), requests.get("memory")
    return Resources(
        cpu_millis(_text(cpu)) if cpu is not None else 0,
        memory_bytes(_text(memory)) if memory is not None else 0,
    )


def _text(value: object) -> str:
    # The API serialises quantities as strings; a bare JSON number is read the same way.
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise QuantityError(f"not a quantity: {value!r}")
    return value if isinstance(value, str) else str(value)


def node_selector_of(spec: JSON) -> dict[str, str]:
    """The Pod's `spec.nodeSelector`."""
    selector = spec.get("nodeSelector")
    if not isinstance(selector, dict):
        return {}
    return {str(key): str(value) for key, value in selector.items()}


def tolerations_of(spec: JSON) -> tuple[Toleration, ...]:
    """The Pod's `spec.tolerations` (an absent operator is Equal, as the API defaults it)."""
    return interned(
        tuple(
            Toleration(
                key=str(item.get("key") or ""),
                operator=str(item.get("operator") or EQUAL),
                value=str(item.get("value") or ""),
                effect=str(item.get("effect") or ""),
            )
            for item in _entries(spec.get("tolerations"))
        )
    )


def _entries(value: Any) -> list[JSON]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
