"""EventRecorder behaviour, the same for the in-memory cluster and for Kubernetes."""

from __future__ import annotations

from brupop.domain.cluster.objects import (
    NODE_EVENT_NAMESPACE,
    ClusterEvent,
    EventSubject,
    EventType,
)
from tests.contract.cluster.conftest import NAMESPACE, Backend, Ports

STARTED = ClusterEvent("brs-node-a", NAMESPACE, "UpdateStarted", "Updating to 1.20.0")
FAILED = ClusterEvent(
    "brs-node-a", NAMESPACE, "UpdateFailed", "drain blocked by default/db-budget", EventType.WARNING
)


def test_recorded_events_are_kept_in_order(backend: Backend, cluster: Ports) -> None:
    cluster.shadows.create("node-a", "uid-a")

    cluster.events.record(STARTED)
    cluster.events.record(FAILED)

    assert backend.recorded_events() == [STARTED, FAILED]


def test_an_event_about_a_shadow_that_is_gone_is_still_recorded(
    backend: Backend, cluster: Ports
) -> None:
    cluster.events.record(STARTED)
    assert backend.recorded_events() == [STARTED]


def test_an_event_about_the_policy_is_recorded_as_about_the_policy_even_once_deleted(
    backend: Backend, cluster: Ports
) -> None:
    deleted = _about_policy("default", "PolicyDeleted", "back to the defaults", EventType.NORMAL)

    cluster.events.record(deleted)

    assert backend.recorded_events() == [deleted]


def test_an_event_about_an_update_policy_is_recorded_against_the_policy(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy({"metadata": {"name": "staging"}, "spec": {"paused": True}})
    ignored = _about_policy(
        "staging", "PolicyIgnored", "only the policy named default counts", EventType.WARNING
    )

    cluster.events.record(ignored)

    assert backend.recorded_events() == [ignored]


def test_an_event_about_a_node_is_recorded_against_the_node_in_the_default_namespace(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a")
    forced = ClusterEvent(
        "node-a",
        NODE_EVENT_NAMESPACE,
        "DrainForcedPodDeletion",
        "Deleted pod apps/db-0 without eviction",
        EventType.WARNING,
        EventSubject.NODE,
    )

    cluster.events.record(forced)

    assert backend.recorded_events() == [forced]


def _about_policy(name: str, reason: str, message: str, kind: EventType) -> ClusterEvent:
    """An event about the UpdatePolicy `name`, in brupop's namespace."""
    return ClusterEvent(name, NAMESPACE, reason, message, kind, EventSubject.UPDATE_POLICY)
