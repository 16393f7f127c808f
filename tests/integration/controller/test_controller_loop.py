"""The controller's real loop (`run`) in a thread, on the real clock, against the in-memory
cluster: it fills slots at once, reacts to watched changes within a second, and hands over
leadership when a replica stops."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.system.clock import SystemClock
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutPolicy
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import build_controller
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.replica import ControllerPorts
from brupop.services.controller.service import ControllerService
from tests.integration.controller.running import running

NEW = "1.20.0"


def _cluster(nodes: int) -> InMemoryCluster:
    cluster = InMemoryCluster(clock=SystemClock())
    for i in range(nodes):
        name = f"node-{i:02d}"
        node = cluster.add_node(name, labels={OPT_IN_LABEL: OPT_IN_VALUE})
        cluster.shadows.create(name, node.uid)
        status = ShadowStatus(
            current_version="1.19.0", target_version=NEW, current_state=UpdateState.IDLE
        )
        cluster.shadows.update_status(shadow_name(name), status)
    return cluster


def _controller(
    cluster: InMemoryCluster, limit: int, *, tick: float, identity: str = "c1", lease: float = 15
) -> ControllerService:
    clock = SystemClock()
    config = ControllerConfig(
        policy=RolloutPolicy(ConcurrencyLimit(limit)),
        window=MaintenanceWindow.starting("* * * * * * *", now=clock.now()),
        namespace=cluster.namespace,
        identity=identity,
        tick_seconds=tick,
        lease_seconds=lease,
        renew_seconds=lease / 3,
        watch_seconds=1.0,
    )
    ports = ControllerPorts(
        shadows=cluster.shadows,
        nodes=cluster.nodes,
        pods=cluster.pods,
        leases=cluster.leases,
        events=cluster.events,
        clock=clock,
    )
    return build_controller(ports, config)


def _wait_for(condition: Callable[[], bool], seconds: float) -> float:
    """Seconds it took for `condition` to hold; fails after `seconds`."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < seconds, "condition not met in time"
        time.sleep(0.01)
    return time.monotonic() - started


def _started(cluster: InMemoryCluster) -> int:
    return sum(1 for s in cluster.shadows.list().items if s.spec.state is not UpdateState.IDLE)


def test_a_ten_node_rollout_with_limit_three_fills_three_slots_in_the_first_pass() -> None:
    cluster = _cluster(10)
    controller = _controller(cluster, 3, tick=30.0)
    with running(controller):
        _wait_for(controller.is_ready, 5)
        assert _started(cluster) == 3, "all three slots filled by the first pass"
        time.sleep(0.3)
        assert _started(cluster) == 3


def test_a_change_is_acted_on_within_a_second_though_the_tick_is_long() -> None:
    cluster = _cluster(1)
    controller = _controller(cluster, 1, tick=30.0)
    with running(controller):
        _wait_for(lambda: _started(cluster) == 1, 5)
        shadow = cluster.shadows.get("brs-node-00")
        assert shadow.status is not None
        reached = shadow.status.model_copy(
            update={"current_state": UpdateState.STAGED_AND_PERFORMED_UPDATE}
        )
        cluster.shadows.update_status(shadow.name, reached)
        took = _wait_for(
            lambda: (
                cluster.shadows.get("brs-node-00").spec.state is UpdateState.REBOOTED_INTO_UPDATE
            ),
            5,
        )
        assert took < 1.0


def test_no_busy_loop_when_nothing_changes() -> None:
    cluster = _cluster(2)
    controller = _controller(cluster, 1, tick=30.0)
    passes = {"n": 0}
    original = cluster.shadows.list

    def counted():  # type: ignore[no-untyped-def]
        passes["n"] += 1
        return original()

    with running(controller):
        _wait_for(lambda: _started(cluster) == 1, 5)
        time.sleep(0.5)  # let the watch-triggered pass after our own write settle
        cluster.shadows.list = counted  # type: ignore[method-assign]
        time.sleep(1.0)
        del cluster.shadows.list
    assert passes["n"] <= 2, "a quiet cluster costs no passes between ticks"


def test_a_stopping_leader_hands_over_to_the_other_replica_within_a_renew_interval() -> None:
    cluster = _cluster(3)
    first = _controller(cluster, 1, tick=0.2, identity="first", lease=3.0)
    second = _controller(cluster, 1, tick=0.2, identity="second", lease=3.0)
    with ExitStack() as replicas:
        stop_first = replicas.enter_context(running(first)).stop
        _wait_for(first.elector.is_leader, 5)
        replicas.enter_context(running(second))
        _wait_for(second.is_ready, 5)
        assert not second.elector.is_leader()
        stop_first.set()  # a SIGTERM: the loop ends its pass and releases the Lease
        took = _wait_for(second.elector.is_leader, 5)
        assert took < 1.5, "taken at the next try (renew interval 1 s), not after 3 s"
        time.sleep(0.3)
        assert _started(cluster) == 1
