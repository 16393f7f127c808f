"""NodePods: a candidate's pods, listed once per few seconds however often it is tried."""

from __future__ import annotations

import structlog
from structlog.testing import capture_logs

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import Pod
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.errors import UnavailableError
from brupop.services.controller.mirrors.node_pods import NodePods
from tests.fakes.clock import FakeClock


class _CountingPods:
    """The in-memory pods, counting listings, with a switch that fails them."""

    def __init__(self, cluster: InMemoryCluster) -> None:
        self._pods: PodRepository = cluster.pods
        self.listed: list[str] = []
        self.failing = False

    def list_on_node(self, node_name: str) -> list[Pod]:
        if self.failing:
            raise UnavailableError("apiserver unavailable")
        self.listed.append(node_name)
        return self._pods.list_on_node(node_name)

    def __getattr__(self, attribute: str) -> object:
        return getattr(self._pods, attribute)


def _rig(ttl: float = 5.0, max_nodes: int = 100) -> tuple[FakeClock, _CountingPods, NodePods]:
    clock = FakeClock()
    cluster = InMemoryCluster(clock=clock)
    for i in range(3):
        cluster.add_node(f"node-{i:02d}")
        cluster.add_pod("default", f"web-{i}", f"node-{i:02d}")
    pods = _CountingPods(cluster)
    log = structlog.get_logger("test")
    source = NodePods(pods, clock, log, ttl_seconds=ttl, max_nodes=max_nodes)  # type: ignore[arg-type]
    return clock, pods, source


def test_a_node_tried_again_within_the_ttl_is_not_listed_again() -> None:
    clock, pods, source = _rig()
    for _ in range(5):
        result = source("node-01")
        assert result is not None and [p.name for p in result] == ["web-1"]
        clock.advance(0.5)
    assert pods.listed == ["node-01"]


def test_a_node_is_listed_again_once_its_listing_is_older_than_the_ttl() -> None:
    clock, pods, source = _rig()
    source("node-01")
    clock.advance(5)
    source("node-01")
    assert pods.listed == ["node-01", "node-01"]


def test_a_failed_listing_is_none_logged_without_traceback_and_tried_again() -> None:
    _clock, pods, source = _rig()
    pods.failing = True
    with capture_logs() as logs:
        assert source("node-02") is None
    assert [e["event"] for e in logs] == ["start_rules.pods_unreadable"]
    assert "exc_info" not in logs[0]
    pods.failing = False
    assert source("node-02") is not None
    assert pods.listed == ["node-02"]


def test_no_more_than_max_nodes_listings_are_kept() -> None:
    _clock, pods, source = _rig(max_nodes=2)
    for name in ("node-00", "node-01", "node-02", "node-02"):
        source(name)
    assert pods.listed == ["node-00", "node-01", "node-02", "node-02"]
