"""How the drains in progress stand: what the REASON of a node being drained says (the pods
left, the budgets that refuse an eviction), read only for the nodes that are being drained."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import structlog

from brupop.domain.cluster.drain_progress import DrainProgress, drain_progress
from brupop.domain.cluster.objects import Node, PodDisruptionBudget
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.errors import PortError


def observe_drains(
    holders: Iterable[Shadow],
    node_of: Callable[[str], Node | None],
    pods: PodRepository,
    log: structlog.typing.FilteringBoundLogger,
) -> dict[str, DrainProgress]:
    """Drain progress by shadow name of every node being drained among `holders` (spec
    RebootedIntoUpdate, status StagedAndPerformedUpdate, Node cordoned); a node whose pods
    cannot be read is left out. Each namespace's budgets are listed once per call, however
    many of the drained nodes run pods in it."""
    drains: dict[str, DrainProgress] = {}
    budgets_in: dict[str, list[PodDisruptionBudget]] = {}
    for shadow in holders:
        status = shadow.status
        node = node_of(shadow.node_name)
        if (
            status is None
            or shadow.spec.state is not UpdateState.REBOOTED_INTO_UPDATE
            or status.current_state is not UpdateState.STAGED_AND_PERFORMED_UPDATE
            or node is None
            or not node.unschedulable
        ):
            continue
        try:
            listed = pods.list_on_node(shadow.node_name)
            namespaces = sorted({pod.namespace for pod in listed})
            for namespace in namespaces:
                if namespace not in budgets_in:
                    budgets_in[namespace] = pods.list_disruption_budgets(namespace)
            budgets = [b for ns in namespaces for b in budgets_in[ns]]
        except PortError as error:
            log.debug("drain.unobservable", node=shadow.node_name, error=str(error))
            continue
        drains[shadow.name] = drain_progress(listed, budgets)
    return drains
