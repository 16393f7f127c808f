"""`simulate --kubeconfig` touches the pods kwok has not made Ready, so that kwok looks again."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kubernetes.client.exceptions import ApiException

from brupop.simulation.fleet.real_cluster.start_up import NUDGE_ANNOTATION, nudge_unready_pods


def pod(name: str, *, is_ready: bool) -> SimpleNamespace:
    condition = SimpleNamespace(type="Ready", status="True" if is_ready else "False")
    return SimpleNamespace(
        metadata=SimpleNamespace(name=name, namespace="default"),
        status=SimpleNamespace(conditions=[condition]),
    )


class PodsApi:
    """The two calls the nudge makes, over a list of pods; `gone` names pods deleted meanwhile."""

    def __init__(self, pods: list[SimpleNamespace], gone: frozenset[str] = frozenset()) -> None:
        self._pods = pods
        self._gone = gone
        self.patches: dict[str, Any] = {}

    def list_pod_for_all_namespaces(self, label_selector: str) -> SimpleNamespace:
        return SimpleNamespace(items=self._pods)

    def patch_namespaced_pod(self, name: str, namespace: str, body: Any, **_: Any) -> None:
        if name in self._gone:
            raise ApiException(status=404, reason="Not Found")
        self.patches[f"{namespace}/{name}"] = body


def test_only_pods_not_ready_yet_are_touched() -> None:
    api = PodsApi([pod("web-0", is_ready=True), pod("agent-node-03", is_ready=False)])

    nudged = nudge_unready_pods(api, 2)

    assert nudged == ["default/agent-node-03"]
    assert api.patches == {
        "default/agent-node-03": {"metadata": {"annotations": {NUDGE_ANNOTATION: "2"}}}
    }


def test_a_pod_deleted_meanwhile_is_passed_over() -> None:
    api = PodsApi(
        [pod("web-0", is_ready=False), pod("web-1", is_ready=False)], gone=frozenset({"web-0"})
    )

    assert nudge_unready_pods(api, 1) == ["default/web-1"]
