"""Cordon, uncordon and load-balancer exclusion that respect what an administrator did.

brupop marks on the Node what it changed itself (annotations), and undoes only that: a node an
administrator cordoned, or excluded from load balancers, stays so after the update. A mark and
the change it stands for are one write, so a failure can never leave a mark without its cordon
(which would later undo an administrator's) or a cordon without its mark.
"""

from __future__ import annotations

import structlog

from brupop.domain.cluster.objects import (
    CORDONED_BY_BRUPOP_ANNOTATION,
    LB_EXCLUDED_BY_BRUPOP_ANNOTATION,
    LB_EXCLUSION_LABEL,
    LB_EXCLUSION_VALUE,
)
from brupop.ports.cluster.node_repository import NodeRepository

MARK = "true"

log = structlog.get_logger(__name__)


class NodeActions:
    """The node changes an agent may ask for, each idempotent."""

    def __init__(self, nodes: NodeRepository) -> None:
        self._nodes = nodes

    def cordon(self, node_name: str) -> None:
        """Make the node unschedulable, remembering whether brupop is the one who did it."""
        node = self._nodes.get(node_name)
        if node.annotations.get(CORDONED_BY_BRUPOP_ANNOTATION) == MARK:
            if not node.unschedulable:
                self._nodes.set_unschedulable(node_name, True)
            return
        if node.unschedulable:
            log.info("node.cordon_kept", node=node_name, reason="cordoned_by_administrator")
            return
        self._nodes.set_unschedulable(
            node_name, True, annotations={CORDONED_BY_BRUPOP_ANNOTATION: MARK}
        )
        log.info("node.cordoned", node=node_name)

    def uncordon(self, node_name: str) -> None:
        """Make the node schedulable again, only if brupop cordoned it."""
        node = self._nodes.get(node_name)
        if node.annotations.get(CORDONED_BY_BRUPOP_ANNOTATION) != MARK:
            if node.unschedulable:
                log.info("node.uncordon_skipped", node=node_name, reason="not_cordoned_by_brupop")
            return
        self._nodes.set_unschedulable(
            node_name, False, annotations={CORDONED_BY_BRUPOP_ANNOTATION: None}
        )
        log.info("node.uncordoned", node=node_name)

    def exclude_from_load_balancers(self, node_name: str) -> None:
        """Add the exclusion label, remembering whether brupop added it."""
        node = self._nodes.get(node_name)
        if node.annotations.get(LB_EXCLUDED_BY_BRUPOP_ANNOTATION) == MARK:
            if node.labels.get(LB_EXCLUSION_LABEL) != LB_EXCLUSION_VALUE:
                self._nodes.set_labels(node_name, {LB_EXCLUSION_LABEL: LB_EXCLUSION_VALUE})
            return
        if LB_EXCLUSION_LABEL in node.labels:
            log.info("node.lb_exclusion_kept", node=node_name, reason="set_by_administrator")
            return
        self._nodes.set_labels(
            node_name,
            {LB_EXCLUSION_LABEL: LB_EXCLUSION_VALUE},
            annotations={LB_EXCLUDED_BY_BRUPOP_ANNOTATION: MARK},
        )
        log.info("node.excluded_from_load_balancers", node=node_name)

    def restore_to_load_balancers(self, node_name: str) -> None:
        """Remove the exclusion label, only if brupop added it."""
        node = self._nodes.get(node_name)
        if node.annotations.get(LB_EXCLUDED_BY_BRUPOP_ANNOTATION) != MARK:
            return
        self._nodes.set_labels(
            node_name,
            {LB_EXCLUSION_LABEL: None},
            annotations={LB_EXCLUDED_BY_BRUPOP_ANNOTATION: None},
        )
        log.info("node.restored_to_load_balancers", node=node_name)
