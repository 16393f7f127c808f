"""Shadows decoded for the mirrors hold equal specs and statuses once, and read the same."""

from __future__ import annotations

from typing import Any

from brupop.adapters.kubernetes.api.shared_values import SharedValues
from brupop.adapters.kubernetes.resources.shadow_objects import shadow_from_object


def _shadow_object(node: str, *, version: str = "1.20.0", crashes: int = 0) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"brs-{node}",
            "namespace": "brupop-bottlerocket-aws",
            "resourceVersion": "7",
            "uid": f"uid-{node}",
            "ownerReferences": [{"kind": "Node", "name": node, "uid": f"node-uid-{node}"}],
        },
        "spec": {"state": "Idle", "version": version},
        "status": {
            "current_version": version,
            "target_version": version,
            "current_state": "Idle",
            "crash_count": crashes,
        },
    }


def test_shadows_with_equal_statuses_hold_one_status_and_one_spec() -> None:
    shared = SharedValues()
    first, second = (shadow_from_object(_shadow_object(n), shared) for n in ("node-a", "node-b"))
    assert first.status is second.status
    assert first.spec is second.spec
    assert first.namespace is second.namespace
    assert (first.node_name, second.node_name) == ("node-a", "node-b")


def test_a_shared_decode_reads_exactly_as_a_plain_one() -> None:
    shared = SharedValues()
    for node, crashes in (("node-a", 0), ("node-b", 0), ("node-c", 2)):
        plain = shadow_from_object(_shadow_object(node, crashes=crashes))
        assert shadow_from_object(_shadow_object(node, crashes=crashes), shared) == plain


def test_different_statuses_stay_apart() -> None:
    shared = SharedValues()
    calm = shadow_from_object(_shadow_object("node-a"), shared)
    crashed = shadow_from_object(_shadow_object("node-b", crashes=3), shared)
    assert calm.status is not None and crashed.status is not None
    assert (calm.status.crash_count, crashed.status.crash_count) == (0, 3)


def test_shared_values_start_again_past_their_limit_and_keep_handing_out_equals() -> None:
    shared = SharedValues(limit=3)
    kept = [shared.share((i, "v")) for i in range(3)]
    assert len(shared) == 3
    assert shared.share((3, "v")) == (3, "v")
    assert len(shared) == 1  # started again: bounded
    assert shared.share((0, "v")) == kept[0]
