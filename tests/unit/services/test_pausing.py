"""Pausing and resuming over the in-memory cluster: what each command writes, and what it
leaves alone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.policy.pause_only import pause_only_spec
from brupop.domain.policy.update_policy import NODE_PAUSED_LABEL, UpdatePolicySpec
from brupop.domain.policy.update_policy_status import HaltReason, PolicyPhase, UpdatePolicyStatus
from brupop.ports.errors import NotFoundError
from brupop.services.pausing import FleetPause, pause_node, resume_node

NS = "brupop-bottlerocket-aws"
HALT = HaltReason(node="node-b", check="nodeReady", detail="NotReady for 600 s")
HALTED = UpdatePolicyStatus(
    phase=PolicyPhase.HALTED,
    message="Halted: node-b failed its health gate (nodeReady).",
    observed_generation=1,
    halted_at=datetime(2026, 11, 30, 9, 0, tzinfo=UTC),
    halt_reason=HALT,
    failures=2,
)


@pytest.fixture
def cluster() -> InMemoryCluster:
    return InMemoryCluster(NS)


def test_a_resumed_status_has_no_halt_and_no_failures_but_keeps_the_rest() -> None:
    assert HALTED.halted
    resumed = HALTED.resumed()
    assert not resumed.halted
    assert (resumed.phase, resumed.failures, resumed.halted_at, resumed.halt_reason) == (
        PolicyPhase.IDLE,
        0,
        None,
        None,
    )
    assert resumed.observed_generation == 1 and resumed.message.startswith("Resumed")


def test_pause_twice_creates_once_then_changes_nothing(cluster: InMemoryCluster) -> None:
    fleet = FleetPause(cluster.policies)

    first, second = fleet.pause(), fleet.pause()

    assert (first.created, first.changed) == (True, True)
    assert (second.created, second.changed) == (False, False)
    assert cluster.policies.get().spec == pause_only_spec()


def test_pause_then_resume_leaves_no_policy_where_there_was_none(cluster: InMemoryCluster) -> None:
    fleet = FleetPause(cluster.policies)

    fleet.pause()
    change = fleet.resume()

    assert change.deleted
    assert cluster.policies.read().default is None


def test_resume_clears_pause_and_halt_and_reports_the_halt(cluster: InMemoryCluster) -> None:
    cluster.policies.apply({"metadata": {"name": "default"}, "spec": {"paused": True}})
    cluster.policies.update_status(HALTED)

    change = FleetPause(cluster.policies).resume()

    assert (change.paused_changed, change.halt_cleared, change.cleared_halt) == (True, True, HALT)
    stored = cluster.policies.get()
    assert stored.spec == UpdatePolicySpec(paused=False)
    assert stored.status == HALTED.resumed()


def test_a_node_pause_is_its_label_and_an_unknown_node_is_not_found(
    cluster: InMemoryCluster,
) -> None:
    cluster.add_node("node-a", labels={"zone": "a"})

    assert pause_node(cluster.nodes, "node-a").changed
    assert not pause_node(cluster.nodes, "node-a").changed
    assert cluster.nodes.get("node-a").labels == {"zone": "a", NODE_PAUSED_LABEL: "true"}
    assert resume_node(cluster.nodes, "node-a").changed
    assert not resume_node(cluster.nodes, "node-a").changed
    assert cluster.nodes.get("node-a").labels == {"zone": "a"}
    with pytest.raises(NotFoundError):
        pause_node(cluster.nodes, "node-x")
