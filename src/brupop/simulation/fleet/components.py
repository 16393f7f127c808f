"""The cluster side of a simulation: the real apiserver and controller, in this process.

Both are built by their processes' containers, with the in-memory cluster (and its stand-ins
for HTTP probes and Prometheus) overriding the providers of the real ones, so they run over it
exactly as they run over Kubernetes in a cluster; their log lines go to one file so the
terminal shows the rollout, not the plumbing.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import IO, Protocol

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.apiserver_http.serving.server import serve_in_thread
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.memory.gates import InMemoryAlertSource
from brupop.adapters.notifications.webhook import WebhookTarget
from brupop.domain.reporting.waiting_reason import NodeReport, RolloutView
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.states import StateTimeouts
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.apiserver.container import build_apiserver_app
from brupop.entrypoints.clusters import ApiserverCluster, ControllerCluster
from brupop.entrypoints.controller.container import ControllerContainer
from brupop.entrypoints.controller.notification_settings import NotificationSettings
from brupop.entrypoints.logging.logs import configure_logging
from brupop.ports.clock import Clock
from brupop.services.apiserver.drain.drainer import DrainTimings
from brupop.services.controller.config import ControllerConfig
from brupop.simulation.flags.options import SimulationOptions
from brupop.simulation.fleet.certificates import LOOPBACK_HOST, TlsFiles
from brupop.simulation.fleet.node_probes import SimulatedNodeProber

ALWAYS = "* * * * * * *"
_FEED_WATCH_SECONDS = 1.0
_CONTROLLER_WATCH_SECONDS = 1.0
_APISERVER_STOP_SECONDS = 5.0
_NOTIFY_FLUSH_SECONDS = 10.0  # a stopping replica's last notifications may take this long
SIMULATED_CLUSTER_NAME = "brupop-simulate"


class RunningApiserver(Protocol):
    """The apiserver while it serves."""

    @property
    def url(self) -> str: ...

    def stop(self) -> None: ...


class ControllerHandle(Protocol):
    """A controller that can be started and stopped (a scenario restarts it)."""

    @property
    def url(self) -> str:
        """The base URL of its HTTP surface (`/metrics`, `/status`), once started."""
        ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def reports(self) -> list[NodeReport]: ...

    def last_pass(self) -> tuple[RolloutView | None, int]:
        """What its last pass knew beyond the shadows, and the update time it expected."""
        ...


_replicas = 0
_log_file: IO[str] | None = None


def send_cluster_logs_to(path: Path) -> None:
    """Route this process's structlog and stdlib logging (apiserver, controller) to `path`."""
    global _log_file
    if _log_file is not None:
        _log_file.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    _log_file = path.open("a", encoding="utf-8", buffering=1)
    configure_logging("simulate", formatter="json", stream=_log_file)
    handler = logging.StreamHandler(_log_file)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)


class _Apiserver:
    def __init__(
        self,
        cluster: ApiserverCluster,
        tls: TlsFiles,
        options: SimulationOptions,
        namespace: str,
        port: int = 0,
        clock: Clock | None = None,
    ):
        timing = options.timing
        app = build_apiserver_app(
            cluster=cluster,
            options=ApiserverOptions(
                namespace=namespace,
                drain=DrainTimings(
                    timeout_seconds=timing["drain-timeout"],
                    retry_interval_seconds=timing["eviction-retry-interval"],
                    deletion_timeout_seconds=timing["pod-deletion-timeout"],
                ),
                feed_watch_seconds=_FEED_WATCH_SECONDS,
            ),
            clock=clock,
        )
        self._server = serve_in_thread(
            app, certfile=tls.cert, keyfile=tls.key, host=LOOPBACK_HOST, port=port
        )
        self._stopped = False

    @property
    def url(self) -> str:
        return self._server.base_url

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._server.stop(_APISERVER_STOP_SECONDS)


def start_apiserver(
    cluster: ApiserverCluster,
    tls: TlsFiles,
    options: SimulationOptions,
    *,
    namespace: str,
    port: int = 0,
    clock: Clock | None = None,
) -> RunningApiserver:
    """The real apiserver app on 127.0.0.1 (`port`, or a free one), HTTPS with the
    simulation's cert, on `clock` when the run has its own (the agents stamp their reports
    with it, and the apiserver judges those stamps against its own now)."""
    return _Apiserver(cluster, tls, options, namespace, port, clock)


class _Controller:
    """One controller replica in a thread, with its HTTP surface on a free loopback port (as
    `brupop controller` serves it); `stop()` then a new instance is a pod restart."""

    def __init__(
        self,
        cluster: ControllerCluster,
        options: SimulationOptions,
        identity: str,
        *,
        namespace: str,
        clock: Clock,
    ):
        container = ControllerContainer(
            config=_controller_config(namespace, clock, options, identity),
            notification_settings=_notification_settings(options),
        )
        container.settings.from_dict(
            {
                "cluster": "memory",
                "namespace": namespace,
                "bind_address": LOOPBACK_HOST,
                "metrics_port": 0,
            }
        )
        container.cluster.override(cluster)
        container.clock.override(clock)
        # The gates' stand-ins: the simulated nodes answer probes while healthy.
        container.prober.override(SimulatedNodeProber(cluster.nodes, cluster.pods))
        container.alert_source.override(simulated_alerts(options))
        self.service = container.service()
        self._publisher = container.publisher()
        self._notifications = container.notifications()
        self._server = container.http_server()
        self._serving = False
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self.service.run, args=(self._stop,), name=identity, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK_HOST}:{self._server.port}"

    def start(self) -> None:
        self._server.start()
        self._serving = True
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._serving:
            self._serving = False
            self._server.stop()
        if self._notifications is not None:
            # What the run said last (the final node, the rollout finished) still goes out.
            self._notifications.close(flush_seconds=_NOTIFY_FLUSH_SECONDS)

    def reports(self) -> list[NodeReport]:
        return self.service.reports()

    def last_pass(self) -> tuple[RolloutView | None, int]:
        return self._publisher.view, self._publisher.scheduling.expected_seconds


def _controller_config(
    namespace: str, clock: Clock, options: SimulationOptions, identity: str
) -> ControllerConfig:
    """The replica's settings from the simulation's flags; the window is always open."""
    timing = options.timing
    return ControllerConfig(
        rollout_rules=RolloutRules(
            limit=ConcurrencyLimit(options.max_concurrent),
            timeouts=StateTimeouts(
                idle=timing["timeout-idle"],
                staged_and_performed_update=timing["timeout-staged"],
                rebooted_into_update=timing["timeout-rebooted"],
                monitoring_update=timing["timeout-monitoring"],
            ),
        ),
        window=MaintenanceWindow.starting(ALWAYS, now=clock.now()),
        namespace=namespace,
        identity=identity,
        tick_seconds=timing["controller-tick"],
        lease_seconds=timing["leader-lease"],
        renew_seconds=timing["leader-renew"],
        watch_seconds=_CONTROLLER_WATCH_SECONDS,
        variant_offer_grace_seconds=0.0,  # a rehearsal names a variant left behind at once
    )


def simulated_alerts(options: SimulationOptions) -> InMemoryAlertSource:
    """Prometheus's stand-in: the policy's Prometheus answers with no alert."""
    alerts = InMemoryAlertSource()
    gate = (options.policy or {}).get("spec", {}).get("alertGate") or {}
    if isinstance(gate.get("prometheusUrl"), str):
        alerts.serve(gate["prometheusUrl"])
    return alerts


def _notification_settings(options: SimulationOptions) -> NotificationSettings:
    """The controller's notification settings for `--notify URL` (none without it)."""
    if options.notify is None:
        return NotificationSettings()
    target = WebhookTarget("notify", options.notify)
    return NotificationSettings(SIMULATED_CLUSTER_NAME, (target,))


def new_controller(cluster: InMemoryCluster, options: SimulationOptions) -> ControllerHandle:
    """The real controller over the in-memory cluster, not yet started (a fresh replica)."""
    return controller_over(cluster, options, namespace=cluster.namespace, clock=cluster.clock)


def controller_over(
    cluster: ControllerCluster,
    options: SimulationOptions,
    *,
    namespace: str,
    clock: Clock,
) -> ControllerHandle:
    """The real controller over any cluster's ports, not yet started (a fresh replica)."""
    global _replicas
    _replicas += 1
    identity = f"brupop-controller-sim-{_replicas}"
    return _Controller(cluster, options, identity, namespace=namespace, clock=clock)


def status_reasons(controller: ControllerHandle | None) -> dict[str, str]:
    """Per node, the REASON column of `brupop status` as of the controller's last pass."""
    if controller is None:
        return {}
    return {row.node: f"{row.reason.value}: {row.detail}" for row in controller.reports()}
