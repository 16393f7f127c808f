"""`brupop pause [--node NODE]`: no node starts an update until `brupop resume`; nodes already
updating finish. The fleet is paused by `spec.paused` of the `default` policy (created with only
that when absent), one node by the label `brupop.bottlerocket.aws/paused=true`."""

from __future__ import annotations

from brupop.cli.pausing.command import Verb, run
from brupop.domain.policy.pause_only import PAUSE_ONLY_FIELDS
from brupop.domain.policy.update_policy import (
    DEFAULT_POLICY_NAME,
    NODE_PAUSED_LABEL,
    NODE_PAUSED_VALUE,
)
from brupop.services.pausing import FleetChange, FleetPause, NodeChange, pause_node


def fleet_line(change: FleetChange, namespace: str) -> str:
    """`fleet paused (policy default in namespace NS)`, or what was already so."""
    policy = f"policy {DEFAULT_POLICY_NAME}"
    if change.created:
        return (
            f"fleet paused ({policy} created in namespace {namespace} with {PAUSE_ONLY_FIELDS}, "
            "as without a policy; brupop resume deletes it)"
        )
    if change.changed:
        return f"fleet paused ({policy} in namespace {namespace})"
    return f"fleet already paused ({policy} in namespace {namespace}); nothing changed"


def node_line(change: NodeChange) -> str:
    """`node NAME paused (label ...=true)`, or that it already was."""
    label = f"label {NODE_PAUSED_LABEL}={NODE_PAUSED_VALUE}"
    if change.changed:
        return f"node {change.node.name} paused ({label})"
    return f"node {change.node.name} already paused ({label}); nothing changed"


PAUSE = Verb(
    name="pause",
    on_fleet=FleetPause.pause,
    on_node=pause_node,
    fleet_line=fleet_line,
    node_line=node_line,
    description="Stop starting node updates (the whole fleet, or one node with --node); "
    "updates already under way finish.",
)


def main(argv: list[str]) -> int:
    """Pause; 0 when done, 1 when the cluster could not be changed or the policy's spec is one
    the controller cannot use, 2 for a bad argument."""
    return run(PAUSE, argv)
