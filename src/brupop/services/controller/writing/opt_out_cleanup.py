"""Cleanup of shadows whose Node left brupop: it lost the opt-in label, or it is gone.

Unlike the original, the node is first given back what brupop took from it (its agent is about
to go away and cannot do it): brupop's cordon is lifted and brupop's load-balancer exclusion
removed, each only when brupop's own annotation says brupop made that change.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from brupop.domain.cluster.objects import (
    CORDONED_BY_BRUPOP_ANNOTATION,
    LB_EXCLUDED_BY_BRUPOP_ANNOTATION,
    LB_EXCLUSION_LABEL,
    ClusterEvent,
    EventType,
    Node,
)
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, Shadow
from brupop.ports.cluster.event_recorder import EventRecorder
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.ports.errors import NotFoundError, PortError

BRUPOP_MARK = "true"  # the value of brupop's own "I changed this" annotations


def has_opted_in(node: Node) -> bool:
    """The Node carries `bottlerocket.aws/updater-interface-version=2.0.0`."""
    return node.labels.get(OPT_IN_LABEL) == OPT_IN_VALUE


class OptOutCleanup:
    """Give opted-out nodes back their schedulability and load balancers, then drop the shadow."""

    def __init__(
        self, shadows: ShadowRepository, nodes: NodeRepository, events: EventRecorder
    ) -> None:
        self._shadows = shadows
        self._nodes = nodes
        self._events = events
        self._log = structlog.get_logger(__name__)

    def sweep(self, shadows: Sequence[Shadow], nodes: Sequence[Node]) -> list[Shadow]:
        """Clean up what needs it; return the shadows that stay in the rollout."""
        by_name = {node.name: node for node in nodes}
        staying: list[Shadow] = []
        for shadow in shadows:
            node = by_name.get(shadow.node_name)
            if node is not None and has_opted_in(node):
                staying.append(shadow)
                continue
            try:
                if not self._clean(shadow, node):
                    staying.append(shadow)
            except PortError as error:
                self._log.warning(
                    "cleanup.failed",
                    shadow=shadow.name,
                    error=type(error).__name__,
                    reason=str(error),
                )
                staying.append(shadow)
        return staying

    def _clean(self, shadow: Shadow, listed: Node | None) -> bool:
        """Clean up after one shadow; False when its Node turns out to be opted in after all."""
        node = listed or self._fresh_node(shadow.node_name)
        if node is not None and has_opted_in(node):
            return False
        if node is not None:
            self._give_back(node)
        self._delete(shadow, opted_out=node is not None)
        return True

    def _fresh_node(self, name: str) -> Node | None:
        """A Node missing from the list is looked up once more before its shadow goes."""
        try:
            return self._nodes.get(name)
        except NotFoundError:
            return None

    def _give_back(self, node: Node) -> None:
        if node.annotations.get(CORDONED_BY_BRUPOP_ANNOTATION) == BRUPOP_MARK:
            # One write: a mark left behind would later undo an administrator's cordon.
            self._nodes.set_unschedulable(
                node.name, False, annotations={CORDONED_BY_BRUPOP_ANNOTATION: None}
            )
            self._log.info("cleanup.uncordoned", node=node.name)
        if node.annotations.get(LB_EXCLUDED_BY_BRUPOP_ANNOTATION) == BRUPOP_MARK:
            self._nodes.set_labels(
                node.name,
                {LB_EXCLUSION_LABEL: None},
                annotations={LB_EXCLUDED_BY_BRUPOP_ANNOTATION: None},
            )
            self._log.info("cleanup.restored_to_load_balancers", node=node.name)

    def _delete(self, shadow: Shadow, *, opted_out: bool) -> None:
        try:
            self._shadows.delete(shadow.name)
        except NotFoundError:
            return
        why = "lost the opt-in label" if opted_out else "no longer exists"
        self._log.info("cleanup.shadow_deleted", shadow=shadow.name, node=shadow.node_name, why=why)
        self._events.record(
            ClusterEvent(
                shadow_name=shadow.name,
                namespace=shadow.namespace,
                reason="ShadowRemoved",
                message=f"Node {shadow.node_name} {why}; brupop stopped managing it",
                type=EventType.NORMAL,
            )
        )
