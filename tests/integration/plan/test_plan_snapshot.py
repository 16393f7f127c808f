"""Reading the fleet for a plan through the controller's ports, over the in-memory cluster."""

from __future__ import annotations

from datetime import UTC, datetime

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.planning.plan_inputs import PlanAssumptions
from brupop.domain.policy.effective_policy import PolicySource
from brupop.domain.policy.policy_object import policy_from_object
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.services.plan_snapshot import read_fleet

NOW = datetime(2026, 5, 4, 10, tzinfo=UTC)


def _policy(spec: dict[str, object]) -> dict[str, object]:
    return {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketUpdatePolicy",
        "metadata": {"name": "default"},
        "spec": spec,
    }


def test_the_fleet_is_read_whole_with_the_policy_in_force_and_its_learned_durations() -> None:
    cluster = InMemoryCluster("brupop")
    cluster.add_node("a", labels={OPT_IN_LABEL: OPT_IN_VALUE})
    cluster.add_node("b")
    cluster.shadows.create("a", cluster.nodes.get("a").uid)
    cluster.policies.apply(_policy({"maxConcurrent": 3}))
    cluster.policies.update_status(UpdatePolicyStatus(update_durations=(100, 200, 300)))

    snapshot = read_fleet(cluster, NOW)

    assert [n.name for n in snapshot.nodes] == ["a", "b"]
    assert [n.name for n in snapshot.opted_in()] == ["a"]
    assert [s.name for s in snapshot.shadows] == ["brs-a"]
    assert snapshot.policy.scheduling.max_concurrent == 3
    assert PlanAssumptions.learned(snapshot.status).expected_seconds == 300


def test_a_policy_file_replaces_the_spec_and_keeps_the_status_the_controller_learned() -> None:
    cluster = InMemoryCluster("brupop")
    cluster.policies.apply(_policy({"maxConcurrent": 3}))
    cluster.policies.update_status(UpdatePolicyStatus(update_durations=(120,)))
    given = policy_from_object(_policy({"paused": True}))

    snapshot = read_fleet(cluster, NOW, policy_file=given)

    assert snapshot.policy.source is PolicySource.POLICY and snapshot.policy.paused
    assert snapshot.policy.scheduling.max_concurrent is None
    assert snapshot.status is not None and snapshot.status.update_durations == (120,)


def test_without_a_policy_object_the_plan_runs_on_the_environment_alone() -> None:
    snapshot = read_fleet(InMemoryCluster("brupop"), NOW)

    assert snapshot.policy.source is PolicySource.ENVIRONMENT and snapshot.status is None
