"""Controller replicas over KubernetesClusters on the real control plane, built the way the
controller's container builds them (`build_controller`), and run in threads."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.adapters.system.clock import SystemClock
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import build_controller
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.service import ControllerService
from tests.support.control_plane.chart_install import NAMESPACE


@dataclass(frozen=True)
class Timing:
    """A replica's loop and Lease timing, shortened so a test sees a takeover in seconds."""

    tick_seconds: float = 0.5
    lease_seconds: float = 6.0
    renew_seconds: float = 1.0
    watch_seconds: float = 2.0


def controller_over(
    cluster: KubernetesCluster,
    identity: str,
    lease_name: str,
    timing: Timing = Timing(),
    limit: int | None = 1,
) -> ControllerService:
    """One replica over `cluster`'s ports, leader-elected on the Lease `lease_name`, starting
    at most `limit` nodes at once (None: no limit)."""
    clock = SystemClock()
    config = ControllerConfig(
        rollout_rules=RolloutRules(ConcurrencyLimit(limit)),
        window=MaintenanceWindow.starting("* * * * * * *", now=clock.now()),
        namespace=NAMESPACE,
        identity=identity,
        tick_seconds=timing.tick_seconds,
        lease_seconds=timing.lease_seconds,
        renew_seconds=timing.renew_seconds,
        lease_name=lease_name,
        watch_seconds=timing.watch_seconds,
    )
    return build_controller(cluster, config, clock)


@dataclass
class Running:
    """A replica's loop in a thread, and the event that stops it."""

    service: ControllerService
    stop: threading.Event
    thread: threading.Thread


@contextmanager
def running(service: ControllerService) -> Iterator[Running]:
    """Run `service.run` in a thread; stop it (releasing its Lease) on the way out, and wait
    for its watch threads too, so none still reads a stream when the client is closed."""
    before = set(threading.enumerate())
    stop = threading.Event()
    thread = threading.Thread(target=service.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield Running(service, stop, thread)
    finally:
        stop.set()
        thread.join(timeout=30)
        for helper in set(threading.enumerate()) - before:
            if helper.name.startswith("watch-"):  # the informers': each ends within a period
                helper.join(timeout=service.config.watch_seconds + 10)
