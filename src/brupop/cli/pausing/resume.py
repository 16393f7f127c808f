"""`brupop resume [--node NODE]`: nodes may start updates again. For the fleet it clears
`spec.paused` of the `default` policy and a halt the controller recorded in its status, or
deletes the policy when `brupop pause` created it and nobody changed it since; for one node
it removes the label `brupop.bottlerocket.aws/paused`."""

from __future__ import annotations

from brupop.cli.pausing.command import Verb, run
from brupop.domain.policy.update_policy import DEFAULT_POLICY_NAME, NODE_PAUSED_LABEL
from brupop.services.pausing import FleetChange, FleetPause, NodeChange, resume_node


def fleet_line(change: FleetChange, namespace: str) -> str:
    """`fleet resumed (policy default in namespace NS)`, naming a cleared halt."""
    policy = f"policy {DEFAULT_POLICY_NAME}"
    if change.policy is None:
        return f"fleet not paused (no {policy} in namespace {namespace}); nothing changed"
    if change.deleted:
        return (
            f"fleet resumed ({policy}, created by brupop pause, deleted from namespace "
            f"{namespace}: the controller's environment settings apply as before)"
        )
    if not change.changed:
        return (
            f"fleet neither paused nor halted ({policy} in namespace {namespace}); nothing changed"
        )
    what = "fleet resumed"
    if change.halt_cleared:
        halt = change.cleared_halt
        named = f" ({halt.node} failed {halt.check})" if halt is not None else ""
        what += f", halt cleared{named}"
    return f"{what} ({policy} in namespace {namespace})"


def node_line(change: NodeChange) -> str:
    """`node NAME resumed (label ... removed)`, or that it was not paused."""
    if change.changed:
        return f"node {change.node.name} resumed (label {NODE_PAUSED_LABEL} removed)"
    return f"node {change.node.name} was not paused (no label {NODE_PAUSED_LABEL}); nothing changed"


RESUME = Verb(
    name="resume",
    on_fleet=FleetPause.resume,
    on_node=resume_node,
    fleet_line=fleet_line,
    node_line=node_line,
    description="Let node updates start again: clear a pause and a halt of the fleet (or "
    "a node's pause with --node).",
)


def main(argv: list[str]) -> int:
    """Resume; 0 when done, 1 when the cluster could not be changed or the policy's spec is one
    the controller cannot use, 2 for a bad argument."""
    return run(RESUME, argv)
