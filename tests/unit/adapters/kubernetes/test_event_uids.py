"""KubernetesEventRecorder: the involved object's uid, looked up only when the caller lacks it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes.client import ApiClient

from brupop.adapters.kubernetes.api.calls import JSON, ApiCalls
from brupop.adapters.kubernetes.resources.events import KubernetesEventRecorder
from brupop.domain.cluster.objects import ClusterEvent


class RecordingCalls(ApiCalls):
    """ApiCalls that answer every read with a shadow of uid `uid-read` and keep what was asked."""

    def __init__(self) -> None:
        super().__init__(ApiClient())
        self.actions: list[str] = []
        self.bodies: list[JSON] = []

    def json(self, action: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> JSON:
        self.actions.append(action)
        if action.startswith("record event"):
            self.bodies.append(args[-1])
            return {}
        return {"metadata": {"uid": "uid-read"}}


def test_an_event_given_its_shadows_uid_is_posted_without_reading_the_shadow() -> None:
    calls = RecordingCalls()
    recorder = KubernetesEventRecorder(calls)

    recorder.record(
        ClusterEvent("brs-node-a", "brupop", "UpdateStarted", "Starting", uid="uid-known")
    )

    assert calls.actions == ["record event UpdateStarted on BottlerocketShadow 'brs-node-a'"]
    assert calls.bodies[0]["involvedObject"]["uid"] == "uid-known"


def test_an_event_without_a_uid_looks_the_shadow_up_for_it() -> None:
    calls = RecordingCalls()
    recorder = KubernetesEventRecorder(calls)

    recorder.record(ClusterEvent("brs-node-a", "brupop", "UpdateStarted", "Starting"))

    assert calls.actions[0] == "get BottlerocketShadow 'brs-node-a'"
    assert calls.bodies[0]["involvedObject"]["uid"] == "uid-read"
