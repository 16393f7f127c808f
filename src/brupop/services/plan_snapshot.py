"""Reading the fleet for `brupop plan`: the cluster as the controller reads it, read only.

The shadows, every Node, every unfinished pod, every PodDisruptionBudget and the `default`
update policy, each listed once through the controller's own ports. The policy in force is the
object's spec (or the one of `--policy FILE`, which replaces it); its status, which holds the
learned durations, the versions first seen and a halt, is the object's in both cases. A
cluster without the policy CRD (NotFoundError) plans as the controller runs: without policy.
Nothing is written.
"""

from __future__ import annotations

from datetime import datetime

from brupop.domain.planning.plan_inputs import FleetSnapshot
from brupop.domain.policy.effective_policy import resolve_policy
from brupop.domain.policy.policy_object import UpdatePolicy
from brupop.ports.cluster.fleet_ports import FleetPorts
from brupop.ports.errors import NotFoundError


def read_fleet(
    cluster: FleetPorts, now: datetime, *, policy_file: UpdatePolicy | None = None
) -> FleetSnapshot:
    """The fleet at `now` (PortError when a listing fails); `policy_file` replaces the spec."""
    shadows = tuple(cluster.shadows.list().items)
    nodes = tuple(cluster.nodes.list().items)
    pods = tuple(cluster.pods.list_all())
    budgets = tuple(cluster.pods.list_all_disruption_budgets())
    try:
        found = cluster.policies.read().default
    except NotFoundError:  # the policy CRD is not installed: the controller runs without one
        found = None
    status = found.status if found is not None else None
    policy = resolve_policy(policy_file if policy_file is not None else found)
    return FleetSnapshot(
        taken_at=now,
        shadows=shadows,
        nodes=nodes,
        pods=pods,
        budgets=budgets,
        policy=policy,
        status=status,
    )
