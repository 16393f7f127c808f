"""observe_drains: how the drains in progress stand, read with as few listings as it can."""

from __future__ import annotations

import structlog

from brupop.domain.cluster.objects import Node, Pod, PodDisruptionBudget
from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState
from brupop.services.controller.mirrors.drain_watch import observe_drains

NAMESPACE = "apps"


class CountingPods:
    """A PodRepository holding one pod in `apps` on each node, counting its listings."""

    def __init__(self) -> None:
        self.budget_listings: list[str] = []
        self.pod_listings: list[str] = []

    def list_on_node(self, node_name: str) -> list[Pod]:
        self.pod_listings.append(node_name)
        pod = Pod(
            f"web-{node_name}", NAMESPACE, f"uid-{node_name}", node_name, labels={"app": "web"}
        )
        return [pod]

    def list_all(self) -> list[Pod]:
        return []

    def get(self, namespace: str, name: str) -> Pod:
        return Pod(name, namespace, "uid", None)

    def evict(self, namespace: str, name: str, grace_period_seconds: int | None = None) -> None:
        return None

    def delete(self, namespace: str, name: str) -> None:
        return None

    def list_disruption_budgets(self, namespace: str) -> list[PodDisruptionBudget]:
        self.budget_listings.append(namespace)
        return [PodDisruptionBudget("web-budget", namespace, {"app": "web"})]

    def list_all_disruption_budgets(self) -> list[PodDisruptionBudget]:
        return []


def draining(name: str) -> Shadow:
    return Shadow(
        name=f"brs-{name}",
        namespace="brupop",
        node_name=name,
        node_uid=f"uid-{name}",
        spec=ShadowSpec(state=UpdateState.REBOOTED_INTO_UPDATE, version="1.1.0"),
        status=ShadowStatus(
            current_version="1.0.0",
            target_version="1.1.0",
            current_state=UpdateState.STAGED_AND_PERFORMED_UPDATE,
        ),
    )


def test_drained_nodes_sharing_a_namespace_list_its_budgets_once_per_pass() -> None:
    names = ["node-a", "node-b", "node-c"]
    nodes = {name: Node(name, f"uid-{name}", unschedulable=True) for name in names}
    pods = CountingPods()

    drains = observe_drains(
        [draining(name) for name in names], nodes.get, pods, structlog.get_logger()
    )

    assert sorted(drains) == [f"brs-{name}" for name in names]
    assert pods.pod_listings == names
    assert pods.budget_listings == [NAMESPACE]
    assert all(d.budgets for d in drains.values()), "each drain still counts the shared budget"
