"""The controller's change watch under a watch that raises something unexpected: it is
restarted (not lost), /readyz's answer turns false while it keeps failing and true once it
works again, and the loop goes on ticking meanwhile."""

from __future__ import annotations

import threading

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.system.clock import SystemClock
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import build_controller
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.service import ControllerService
from brupop.services.runtime.supervisor import RestartSchedule
from tests.fakes.breakable_watch import with_breakable_shadows
from tests.support.polling import wait_until

QUICK = RestartSchedule(first_seconds=0.01, cap_seconds=0.05, failing_after=3, healthy_after=0.3)


def _controller(cluster: InMemoryCluster) -> ControllerService:
    clock = SystemClock()
    config = ControllerConfig(
        rollout_rules=RolloutRules(ConcurrencyLimit(1)),
        window=MaintenanceWindow.starting("* * * * * * *", now=clock.now()),
        namespace=cluster.namespace,
        identity="c1",
        tick_seconds=30.0,
        watch_seconds=1.0,
        watch_restart=QUICK,
    )
    return build_controller(cluster, config, clock)


def test_a_watch_that_keeps_raising_is_restarted_and_makes_the_controller_unready() -> None:
    cluster = InMemoryCluster(clock=SystemClock())
    shadows = with_breakable_shadows(cluster)
    node = cluster.add_node("node-00", labels={OPT_IN_LABEL: OPT_IN_VALUE})
    cluster.shadows.create("node-00", node.uid)
    controller = _controller(cluster)
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,), daemon=True)
    thread.start()
    try:
        wait_until(lambda: shadows.watch_calls >= 4)
        assert not controller.is_ready(), "a watch that keeps failing is not ready"
        assert controller.is_healthy(), "the loop itself goes on"

        shadows.broken.clear()
        wait_until(controller.is_ready)
        status = ShadowStatus(
            current_version="1.19.0", target_version="1.20.0", current_state=UpdateState.IDLE
        )
        cluster.shadows.update_status(shadow_name("node-00"), status)
        wait_until(lambda: cluster.shadows.get("brs-node-00").spec.state is not UpdateState.IDLE)
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
