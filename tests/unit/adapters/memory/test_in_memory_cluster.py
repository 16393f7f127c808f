"""The in-memory cluster behaves like the Kubernetes parts brupop relies on."""

import threading
from datetime import timedelta

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import OwnerReference, Taint, WatchEventType
from brupop.domain.shadow import ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import (
    AlreadyExistsError,
    ConflictError,
    NotFoundError,
    TooManyRequestsError,
    WatchExpiredError,
)
from tests.fakes.clock import FakeClock

NS = "brupop-bottlerocket-aws"
RS = (OwnerReference(kind="ReplicaSet", name="web-abc", controller=True),)


def test_stale_spec_write_conflicts_and_fresh_one_succeeds() -> None:
    cluster = InMemoryCluster()
    created = cluster.shadows.create("n1", "uid-1")
    moved = cluster.shadows.replace_spec(
        created.name,
        ShadowSpec(state=UpdateState.STAGED_AND_PERFORMED_UPDATE, version="1.2.0"),
        created.resource_version,
    )
    with pytest.raises(ConflictError):
        cluster.shadows.replace_spec(created.name, ShadowSpec(), created.resource_version)
    assert cluster.shadows.replace_spec(created.name, ShadowSpec(), moved.resource_version)


def test_creating_a_shadow_twice_is_already_exists() -> None:
    cluster = InMemoryCluster()
    cluster.shadows.create("n1", "uid-1")
    with pytest.raises(AlreadyExistsError):
        cluster.shadows.create("n1", "uid-1")


def test_watch_resumes_after_a_resource_version_without_missing_changes() -> None:
    cluster = InMemoryCluster()
    shadow = cluster.shadows.create("n1", "uid-1")
    listing = cluster.shadows.list()
    status = ShadowStatus(
        current_version="1.0.0", target_version="1.1.0", current_state=UpdateState.IDLE
    )
    cluster.shadows.update_status(shadow.name, status)
    cluster.shadows.delete(shadow.name)
    events = list(cluster.shadows.watch(listing.resource_version, timeout_seconds=0.05))
    assert [e.type for e in events] == [WatchEventType.MODIFIED, WatchEventType.DELETED]
    assert events[0].object.status == status


def test_watch_wakes_up_on_a_change_from_another_thread() -> None:
    cluster = InMemoryCluster()
    start = cluster.shadows.list().resource_version
    threading.Timer(0.05, lambda: cluster.shadows.create("n2", "u2")).start()
    events = cluster.shadows.watch(start, timeout_seconds=5)
    first = next(iter(events))
    assert first.type is WatchEventType.ADDED
    assert first.object.node_name == "n2"


def test_watch_from_a_forgotten_version_expires() -> None:
    cluster = InMemoryCluster()
    cluster.shadows.store._history = type(cluster.shadows.store._history)(maxlen=2)
    for i in range(5):
        cluster.shadows.create(f"n{i}", f"u{i}")
    with pytest.raises(WatchExpiredError):
        list(cluster.shadows.watch("1", timeout_seconds=0))


def test_an_open_watch_that_falls_behind_the_history_expires_instead_of_skipping() -> None:
    cluster = InMemoryCluster()
    cluster.shadows.store._history = type(cluster.shadows.store._history)(maxlen=2)
    start = cluster.shadows.list().resource_version
    cluster.shadows.create("n0", "u0")
    events = iter(cluster.shadows.watch(start, timeout_seconds=5))
    assert next(events).object.node_name == "n0"
    for i in range(1, 5):  # n1 and n2 leave the history before the watcher reads on
        cluster.shadows.create(f"n{i}", f"u{i}")
    with pytest.raises(WatchExpiredError):
        next(events)


def test_eviction_refused_by_budget_and_replacement_lands_elsewhere() -> None:
    cluster = InMemoryCluster()
    for name in ("a", "b"):
        cluster.add_node(name)
    cluster.add_pod("default", "web-1", "a", labels={"app": "web"}, owners=RS)
    cluster.add_pod("default", "web-2", "b", labels={"app": "web"}, owners=RS)
    cluster.add_disruption_budget("default", "web-pdb", {"app": "web"}, min_available=2)
    with pytest.raises(TooManyRequestsError, match="web-pdb"):
        cluster.pods.evict("default", "web-1")
    cluster.add_disruption_budget("default", "web-pdb", {"app": "web"}, min_available=1)
    cluster.nodes.set_unschedulable("a", True)
    cluster.pods.evict("default", "web-1")
    assert [p.name for p in cluster.pods.list_on_node("a")] == []
    assert len(cluster.pods.list_on_node("b")) == 2


def test_tokens_are_bound_to_their_pod_and_audience() -> None:
    clock = FakeClock()
    cluster = InMemoryCluster(clock=clock)
    cluster.add_node("n1")
    cluster.add_pod(NS, "agent-x", "n1", service_account="brupop-agent-service-account")
    token = cluster.issue_token(NS, "agent-x", ttl_seconds=60)
    identity = cluster.token_reviewer.review(token, ("brupop-apiserver",))
    assert identity.authenticated
    assert identity.username == f"system:serviceaccount:{NS}:brupop-agent-service-account"
    assert (identity.pod_name, identity.node_name) == ("agent-x", "n1")
    assert not cluster.token_reviewer.review(token, ("other",)).authenticated
    assert not cluster.token_reviewer.review("garbage", ("brupop-apiserver",)).authenticated
    clock.advance(61)
    assert not cluster.token_reviewer.review(token, ("brupop-apiserver",)).authenticated
    assert cluster.token_reviewer.review_count == 4


def test_removing_a_node_collects_its_shadow_and_pods() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("n1")
    cluster.shadows.create("n1", "uid")
    cluster.add_pod("default", "p", "n1")
    cluster.remove_node("n1")
    with pytest.raises(NotFoundError):
        cluster.shadows.get("brs-n1")
    assert cluster.pods.list_on_node("n1") == []


def test_a_node_is_created_at_the_clusters_clock_time_unless_told_otherwise() -> None:
    clock = FakeClock()
    cluster = InMemoryCluster(clock=clock)
    clock.advance(60)

    fresh = cluster.add_node("n1")
    old = cluster.add_node("n2", created_at=clock.now() - timedelta(days=3))

    assert fresh.created_at == clock.now()
    assert old.created_at == clock.now() - timedelta(days=3)


def test_an_autoscaler_can_taint_a_node_and_mark_it_deleting() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("n1")

    cluster.set_node_taints("n1", [Taint("ToBeDeletedByClusterAutoscaler", "1", "NoSchedule")])
    cluster.set_node_deleting("n1")

    node = cluster.nodes.get("n1")
    assert node.taints == (Taint("ToBeDeletedByClusterAutoscaler", "1", "NoSchedule"),)
    assert node.deleting


def test_an_evicted_pods_replacement_never_lands_on_a_node_being_deleted() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("a", unschedulable=True)
    cluster.add_node("b", deleting=True)  # emptier than c, so it would be picked first
    cluster.add_node("c")
    cluster.add_pod("default", "busy", "c")
    cluster.add_pod("default", "web-1", "a", owners=RS)

    cluster.pods.evict("default", "web-1")

    assert cluster.pods.list_on_node("b") == []
    assert len(cluster.pods.list_on_node("c")) == 2
