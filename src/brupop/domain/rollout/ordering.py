"""The order in which nodes are offered a rollout slot.

Fewest crashes first, then by shadow name (a stable order, unlike the original's cache order);
shadows without a status after those with one; the node hosting the controller last, so the
controller is disrupted only once every other node has had its turn.
"""

from __future__ import annotations

from collections.abc import Iterable

from brupop.domain.shadow import Shadow


def update_order(shadows: Iterable[Shadow], controller_node: str | None = None) -> list[Shadow]:
    """`shadows` sorted into the order they may start updating."""

    def key(shadow: Shadow) -> tuple[bool, bool, int, str]:
        hosts_controller = controller_node is not None and shadow.node_name == controller_node
        no_status = shadow.status is None
        crashes = shadow.status.crash_count if shadow.status is not None else 0
        return (hosts_controller, no_status, crashes, shadow.name)

    return sorted(shadows, key=key)
