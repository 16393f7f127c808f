"""The controller's real loop (`run`) in a thread, on the real clock, against the in-memory
cluster: it fills slots at once, reacts to watched changes before any tick, hands over
leadership when a replica stops, and says at debug why each pass runs. No assert on how long a
wait took: a tick or a Lease that could have caused what is awaited is made far longer than the
wait (a loaded machine may be slow, never wrong)."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from contextlib import ExitStack
from typing import Any

from structlog.testing import capture_logs

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.system.clock import SystemClock
from brupop.domain.cluster.objects import Lease
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import build_controller
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.replica import ControllerMetrics
from brupop.services.controller.service import ControllerService
from tests.integration.controller.running import running
from tests.support.polling import wait_until
from tests.unit.services.controller.fleet import RecordingMetrics

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


NEVER = 3600.0  # seconds: a tick or a Lease that does not come due within any test
PATIENCE = 30.0  # seconds a test waits for what the loop must do


def _controller(
    cluster: InMemoryCluster,
    limit: int,
    *,
    tick: float,
    identity: str = "c1",
    lease: float = 15,
    renew: float | None = None,
    metrics: RecordingMetrics | None = None,
) -> ControllerService:
    clock = SystemClock()
    config = ControllerConfig(
        rollout_rules=RolloutRules(ConcurrencyLimit(limit)),
        window=MaintenanceWindow.starting("* * * * * * *", now=clock.now()),
        namespace=cluster.namespace,
        identity=identity,
        tick_seconds=tick,
        lease_seconds=lease,
        renew_seconds=renew or lease / 3,
        watch_seconds=1.0,
    )
    recorded = metrics or RecordingMetrics()
    return build_controller(
        cluster, config, clock, ControllerMetrics(rollout=recorded, safety=recorded)
    )


def _wait_for(condition: Callable[[], bool], seconds: float) -> None:
    wait_until(condition, "the loop's doing", seconds=seconds)


def _started(cluster: InMemoryCluster) -> int:
    return sum(1 for s in cluster.shadows.list().items if s.spec.state is not UpdateState.IDLE)


def _report_staged(cluster: InMemoryCluster) -> None:
    """node-00's agent reports it staged and performed the update (a shadow change to act on)."""
    shadow = cluster.shadows.get("brs-node-00")
    assert shadow.status is not None
    reached = shadow.status.model_copy(
        update={"current_state": UpdateState.STAGED_AND_PERFORMED_UPDATE}
    )
    cluster.shadows.update_status(shadow.name, reached)


def _ticks_past(metrics: RecordingMetrics, ended: int, count: int) -> None:
    """Until the loop has ended `count` more ticks than the `ended` it had."""
    _wait_for(lambda: len(metrics.pass_cpu) >= ended + count, PATIENCE)


def test_a_ten_node_rollout_with_limit_three_fills_three_slots_in_the_first_pass() -> None:
    cluster, metrics = _cluster(10), RecordingMetrics()
    controller = _controller(cluster, 3, tick=30.0, metrics=metrics)
    with running(controller):
        _wait_for(controller.is_ready, PATIENCE)
        assert _started(cluster) == 3, "all three slots filled by the first pass"
        ended = len(metrics.pass_cpu)
        controller.wake()  # a later tick, as a watched change would ask for
        _ticks_past(metrics, ended, 1)
        assert _started(cluster) == 3


def test_a_change_is_acted_on_at_once_though_no_tick_comes() -> None:
    cluster = _cluster(1)
    controller = _controller(cluster, 1, tick=NEVER)
    with running(controller):
        _wait_for(lambda: _started(cluster) == 1, PATIENCE)
        _report_staged(cluster)
        _wait_for(
            lambda: (
                cluster.shadows.get("brs-node-00").spec.state is UpdateState.REBOOTED_INTO_UPDATE
            ),
            PATIENCE,
        )


def _counting_renewals(cluster: InMemoryCluster) -> dict[str, int]:
    """From now on, every write of a Lease the cluster holds (a leader's renewal) is counted."""
    writes = {"n": 0}
    original = cluster.leases.replace

    def counted(lease: Lease) -> Lease:
        writes["n"] += 1
        return original(lease)

    cluster.leases.replace = counted  # type: ignore[method-assign]
    return writes


RENEWALS = 4  # renewals a quiet loop is watched over


def test_no_busy_loop_when_nothing_changes() -> None:
    """The leader's own renewals are the clock: over four of them a quiet cluster costs one pass
    each (the renewal's), and one more for a renewal's pass still ending when counting starts;
    a loop ticking every 50 ms makes about 40."""
    cluster, metrics = _cluster(2), RecordingMetrics()
    controller = _controller(cluster, 1, tick=NEVER, renew=0.5, metrics=metrics)
    renewals = _counting_renewals(cluster)
    with running(controller):
        _wait_for(lambda: _started(cluster) == 1, PATIENCE)
        _wait_for(lambda: renewals["n"] >= 1, PATIENCE)  # past the passes our start's writes cause
        ended, renewed = len(metrics.pass_cpu), renewals["n"]
        _wait_for(lambda: renewals["n"] >= renewed + RENEWALS, PATIENCE)
        passes = len(metrics.pass_cpu) - ended
    assert passes <= RENEWALS + 1, "a quiet cluster costs no passes between renewals"


def test_a_stopping_leader_hands_over_to_the_other_replica_before_its_lease_expires() -> None:
    cluster = _cluster(3)
    first = _controller(cluster, 1, tick=0.2, identity="first", lease=NEVER, renew=1.0)
    metrics = RecordingMetrics()
    second = _controller(
        cluster, 1, tick=0.2, identity="second", lease=NEVER, renew=1.0, metrics=metrics
    )
    with ExitStack() as replicas:
        stop_first = replicas.enter_context(running(first)).stop
        _wait_for(first.elector.is_leader, PATIENCE)
        replicas.enter_context(running(second))
        _wait_for(second.is_ready, PATIENCE)
        assert not second.elector.is_leader()
        stop_first.set()  # a SIGTERM: the loop ends its pass and releases the Lease
        _wait_for(second.elector.is_leader, PATIENCE)  # released: it would expire in an hour
        _ticks_past(metrics, len(metrics.pass_cpu), 2)  # two ticks as the leader
        assert _started(cluster) == 1


# --- the loop says at debug why each pass runs (what woke it, or its wait ending) ---


def _pass_due(logs: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [line for line in list(logs) if line["event"] == "controller.pass_due"]


def test_a_pass_woken_by_a_shadow_change_names_the_shadows_watch() -> None:
    cluster = _cluster(1)
    with capture_logs() as logs:
        controller = _controller(cluster, 1, tick=NEVER)
        with running(controller):
            _wait_for(lambda: _started(cluster) == 1, PATIENCE)
            _report_staged(cluster)
            _wait_for(
                lambda: any("shadows" in line["woken_by"] for line in _pass_due(logs)), PATIENCE
            )
    assert all(line["log_level"] == "debug" for line in _pass_due(logs))


def test_a_pass_nothing_woke_names_no_watch_and_the_lease_due() -> None:
    cluster = _cluster(1)
    with capture_logs() as logs:
        controller = _controller(cluster, 1, tick=NEVER, renew=0.5)
        with running(controller):
            _wait_for(lambda: _started(cluster) == 1, PATIENCE)
            seen = len(_pass_due(logs))
            _wait_for(lambda: len(_pass_due(logs)) >= seen + 4, PATIENCE)
    quiet = [line for line in _pass_due(logs)[seen:] if not line["woken_by"]]
    assert quiet, "a renewal's pass, with nothing changed, names no watch"
    assert all(0 <= line["lease_due_seconds"] <= 0.5 for line in quiet)
