"""Which changes of a Node matter to the controller: a Node appearing or going, its opt-in
label, its pause label and its cordon (the fleet mirror wakes the loop for these only)."""

from __future__ import annotations

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.update_policy import NODE_PAUSED_LABEL, NODE_PAUSED_VALUE
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE


def node_change_matters(old: Node | None, new: Node | None) -> bool:
    """Which Node changes can change a decision: a Node appearing or going, its opt-in label,
    its pause label, its cordon. Heartbeats and other status updates of a large cluster wake
    nobody."""
    if old is None or new is None:
        return old is not new
    return _key(old) != _key(new)


def node_is_paused(node: Node | None) -> bool:
    """The Node carries the pause label (`brupop pause --node`): none of its updates starts."""
    return node is not None and node.labels.get(NODE_PAUSED_LABEL) == NODE_PAUSED_VALUE


def _key(node: Node) -> tuple[bool, bool, bool]:
    opted_in = node.labels.get(OPT_IN_LABEL) == OPT_IN_VALUE
    return (opted_in, node_is_paused(node), node.unschedulable)
