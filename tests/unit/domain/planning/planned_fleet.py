"""Fleets for the plan's tests: opted-in Nodes, their shadows Idle and offered a version, pods."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from brupop.domain.cluster.objects import Node, OwnerReference, Pod, PodDisruptionBudget
from brupop.domain.cluster.taints import Taint
from brupop.domain.planning.fleet_plan import FleetPlan, NodePlan
from brupop.domain.planning.plan_inputs import FleetSnapshot, PlanAssumptions
from brupop.domain.planning.rollout_plan import plan_rollout_ahead
from brupop.domain.policy.effective_policy import (
    ENVIRONMENT_POLICY,
    EffectivePolicy,
    policy_from_spec,
)
from brupop.domain.policy.policy_object import read_spec
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, Shadow, ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState

NOW = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)  # a Monday
ZONE = "topology.kubernetes.io/zone"
_OWNER = (OwnerReference(kind="ReplicaSet", name="rs", controller=True),)


def policy(spec: Mapping[str, Any]) -> EffectivePolicy:
    """The policy in force for a `default` object with this (wire) spec."""
    read, problem = read_spec(dict(spec))
    assert read is not None, problem
    return policy_from_spec(read)


def node(name: str, **labels: str) -> Node:
    return Node(name, f"uid-{name}", labels={OPT_IN_LABEL: OPT_IN_VALUE, **labels})


def tainted(name: str, key: str) -> Node:
    return Node(name, f"uid-{name}", labels={OPT_IN_LABEL: OPT_IN_VALUE}, taints=(Taint(key),))


def shadow(
    name: str,
    *,
    current: str = "1.0.0",
    target: str = "1.1.0",
    spec: ShadowSpec | None = None,
    state: UpdateState = UpdateState.IDLE,
) -> Shadow:
    return Shadow(
        name=f"brs-{name}",
        namespace="brupop",
        node_name=name,
        node_uid=f"uid-{name}",
        spec=spec or ShadowSpec(),
        status=ShadowStatus(current_version=current, target_version=target, current_state=state),
    )


def pods(name: str, count: int, **labels: str) -> tuple[Pod, ...]:
    return tuple(
        Pod(f"{name}-p{i}", "default", f"u-{name}-{i}", name, labels=labels, owners=_OWNER)
        for i in range(count)
    )


def budget(name: str, min_available: int, **selector: str) -> PodDisruptionBudget:
    return PodDisruptionBudget(name, "default", selector=selector, min_available=min_available)


def plan_of(
    nodes: list[Node],
    *,
    shadows: list[Shadow] | None = None,
    pods_: tuple[Pod, ...] = (),
    budgets: tuple[PodDisruptionBudget, ...] = (),
    in_force: EffectivePolicy = ENVIRONMENT_POLICY,
    status: UpdatePolicyStatus | None = None,
    seconds: int = 600,
    limit: int | None = 1,
    staged_seconds: int | None = None,
) -> FleetPlan:
    snapshot = FleetSnapshot(
        taken_at=NOW,
        shadows=tuple(shadows if shadows is not None else [shadow(n.name) for n in nodes]),
        nodes=tuple(nodes),
        pods=pods_,
        budgets=budgets,
        policy=in_force,
        status=status,
    )
    assumptions = PlanAssumptions(
        expected_seconds=seconds, limit=ConcurrencyLimit(limit), staged_seconds=staged_seconds
    )
    return plan_rollout_ahead(snapshot, assumptions)


def line(plan: FleetPlan, name: str) -> NodePlan:
    return next(n for n in plan.nodes if n.node == name)


def offset(moment: datetime | None) -> float | None:
    """Seconds from NOW."""
    return None if moment is None else (moment - NOW).total_seconds()
