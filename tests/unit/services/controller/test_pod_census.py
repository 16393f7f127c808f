"""The pod census lists the cluster only when asked and at most once per period, and gives each
node's drain cost and whether its pods fit elsewhere."""

from __future__ import annotations

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.capacity.room import RoomVerdict, check_room_in
from brupop.domain.cluster.objects import OwnerReference, PodPhase, Resources
from brupop.ports.errors import UnavailableError
from brupop.services.controller.mirrors.pod_census import STALE_AFTER, PodCensus
from tests.fakes.clock import FakeClock

GI = 1024**3
DAEMON_SET = (OwnerReference("DaemonSet", "agent", controller=True),)


class CountingPods:
    """The in-memory PodRepository, counting the cluster-wide lists."""

    def __init__(self, cluster: InMemoryCluster) -> None:
        self.inner = cluster.pods
        self.full_lists = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def list_all(self) -> list:  # type: ignore[type-arg]
        self.full_lists += 1
        return self.inner.list_all()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def cluster(clock: FakeClock) -> InMemoryCluster:
    cluster = InMemoryCluster(clock=clock)
    for name in ("n1", "n2", "n3"):
        cluster.add_node(name, allocatable=Resources(2000, 8 * GI))
    return cluster


def test_a_census_is_taken_only_when_asked_and_reused_for_its_period(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    pods = CountingPods(cluster)
    census = PodCensus(pods, cluster.nodes, census_seconds=30)  # type: ignore[arg-type]
    assert pods.full_lists == 0

    first = census.snapshot(clock.now())
    clock.advance(29)
    again = census.snapshot(clock.now())
    clock.advance(1)
    fresh = census.snapshot(clock.now())

    assert again is first
    assert fresh is not first and fresh.taken_at == clock.now()
    assert pods.full_lists == 2


def test_a_census_sees_what_changed_only_after_its_period(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    census = PodCensus(cluster.pods, cluster.nodes, census_seconds=30)
    assert census.snapshot(clock.now()).cost("n1") == 0

    cluster.add_pod("shop", "web-0", "n1")
    clock.advance(10)
    assert census.snapshot(clock.now()).cost("n1") == 0
    clock.advance(20)
    assert census.snapshot(clock.now()).cost("n1") == 1


def test_each_nodes_cost_counts_evicted_pods_and_doubles_those_behind_a_budget(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    cluster.add_pod("shop", "db-0", "n1", labels={"app": "db"})
    cluster.add_pod("shop", "web-0", "n1", labels={"app": "web"})
    cluster.add_pod("kube-system", "agent-n1", "n1", owners=DAEMON_SET)
    cluster.add_pod("kube-system", "agent-n2", "n2", owners=DAEMON_SET)
    cluster.add_pod("jobs", "report", "n3", phase=PodPhase.SUCCEEDED)
    cluster.add_disruption_budget("shop", "db-pdb", {"app": "db"}, min_available=1)

    snapshot = PodCensus(cluster.pods, cluster.nodes).snapshot(clock.now())

    assert {name: snapshot.cost(name) for name in ("n1", "n2", "n3")} == {
        "n1": 3,
        "n2": 0,
        "n3": 0,
    }
    assert [pod.name for pod in snapshot.evicted("n1")] == ["db-0", "web-0"]
    assert [node.name for node in snapshot.nodes] == ["n1", "n2", "n3"]


def test_the_census_says_whether_a_nodes_pods_fit_on_the_others(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    cluster.add_pod("shop", "big", "n1", requests=Resources(1500, GI))
    cluster.add_pod("shop", "fill-2", "n2", requests=Resources(1000, GI))
    cluster.add_pod("shop", "fill-3", "n3", requests=Resources(1000, GI))

    snapshot = PodCensus(cluster.pods, cluster.nodes).snapshot(clock.now())

    def room_for(node: str, *also_leaving: str) -> RoomVerdict:
        evicted = snapshot.evicted(node)
        return check_room_in(
            evicted, snapshot.nodes, snapshot.room, node, also_leaving=also_leaving
        )

    assert room_for("n1").reason == "no room for 1 pod (needs 1.5 CPU)"
    assert room_for("n2").fits
    assert not room_for("n2", "n3").fits


def test_a_failed_refresh_keeps_a_recent_census_and_fails_once_it_is_stale(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    census = PodCensus(cluster.pods, cluster.nodes, census_seconds=30)
    taken = census.snapshot(clock.now())
    cluster.pods.unavailable = True

    clock.advance(30 * STALE_AFTER - 1)
    assert census.snapshot(clock.now()) is taken
    clock.advance(1)
    with pytest.raises(UnavailableError):
        census.snapshot(clock.now())


def test_without_any_census_a_failed_listing_reaches_the_caller(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    cluster.pods.unavailable = True

    with pytest.raises(UnavailableError):
        PodCensus(cluster.pods, cluster.nodes).snapshot(clock.now())


def test_a_census_period_must_be_positive(cluster: InMemoryCluster) -> None:
    with pytest.raises(ValueError, match="census_seconds"):
        PodCensus(cluster.pods, cluster.nodes, census_seconds=0)
