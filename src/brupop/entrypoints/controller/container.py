"""The controller's composition root: the whole graph of one `brupop controller` replica.

Settings in (`settings`, a Configuration loaded from ControllerSettings; `config`, the service's
ControllerConfig; `notification_settings`), then one provider per collaborator: the cluster
BRUPOP_CLUSTER chooses, the clock, the prober and the alert source the gates ask, the
notifications hung on the Events and the metrics, every part of the replica, the service and
its HTTP surface. Tests and `brupop simulate` put a fake in place by overriding the provider
of that one collaborator (`container.cluster.override(...)`, `container.clock`,
`container.prober`, ...); `build_controller` is the short way to a service over a given
cluster and clock.
"""

from __future__ import annotations

from collections.abc import Iterator

from dependency_injector import containers, providers

from brupop.adapters.http.bounded_get import BoundedGet
from brupop.adapters.http.prober import UrlProber
from brupop.adapters.http.prometheus import PrometheusAlertSource
from brupop.adapters.system.clock import SystemClock
from brupop.domain.policy.address_allowance import AddressAllowance
from brupop.entrypoints.clusters import ClusterChoice, ControllerCluster
from brupop.entrypoints.controller.http_server import ControllerHttpServer, Surface
from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics
from brupop.entrypoints.controller.notification_settings import NotificationSettings
from brupop.entrypoints.controller.notifying_ports import (
    notices_read,
    notifying_events,
    notifying_metrics,
    wire_notifications,
)
from brupop.ports.clock import Clock
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.leader_writes import LeaderWrites
from brupop.services.controller.mirror_catch_up import MirrorCatchUp
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.mirrors.node_pods import NodePods
from brupop.services.controller.mirrors.pod_census import PodCensus
from brupop.services.controller.node_reasons import NodeReasons
from brupop.services.controller.pass_publishing import PassPublisher
from brupop.services.controller.policy.policy_follower import PolicyFollower
from brupop.services.controller.policy.policy_rules import PolicyRules
from brupop.services.controller.replica import ControllerMetrics
from brupop.services.controller.rollout_pass import RolloutPass
from brupop.services.controller.runtime.leader_election import LeaderElector
from brupop.services.controller.safety.health_checks import HealthChecks
from brupop.services.controller.safety.rollout_safety import RolloutSafety
from brupop.services.controller.service import ControllerService, replica_log
from brupop.services.controller.starts.autoscaler_guard import AutoscalerGuard
from brupop.services.controller.starts.offered_versions import OfferedVersions
from brupop.services.controller.starts.prestage_keeper import PrestageKeeper
from brupop.services.controller.starts.start_rules import StartRules
from brupop.services.controller.status_readout import StatusReadout
from brupop.services.controller.writing.opt_out_cleanup import OptOutCleanup
from brupop.services.controller.writing.recalled_failures import RecalledFailures
from brupop.services.controller.writing.rollout_writer import RolloutWriter
from brupop.services.controller.writing.write_journal import WriteJournal

EVENT_COMPONENT = "brupop-controller"


def serve_surface(server: ControllerHttpServer) -> Iterator[ControllerHttpServer]:
    """The HTTP surface served from the resource's start to its shutdown."""
    server.start()
    try:
        yield server
    finally:
        server.stop()


class ControllerContainer(containers.DeclarativeContainer):
    """Providers for one `brupop controller` replica (Singletons: one container, one replica)."""

    settings = providers.Configuration(strict=True)
    config = providers.Dependency(instance_of=ControllerConfig)
    notification_settings = providers.Dependency(
        instance_of=NotificationSettings, default=NotificationSettings()
    )

    # --- the outside world: the cluster, the clock, the gates' adapters, the metrics --------
    clock = providers.Singleton(SystemClock)
    clusters = providers.Container(
        ClusterChoice,
        kind=settings.cluster,
        namespace=settings.namespace,
        component=EVENT_COMPONENT,
        clock=clock,
        request_timeout_seconds=config.provided.kubernetes_timeout_seconds,
        lease_timeout_seconds=config.provided.lease_timeout_seconds,
    )
    cluster = clusters.cluster
    prometheus = providers.Singleton(
        PrometheusRolloutMetrics, limit=config.provided.rollout_rules.limit
    )
    # Probes and Prometheus connect only where the address allowance allows (docs/safety.md):
    # main gives the one PROBE_ALLOWED_NETWORKS lifts; by default, the refusals alone.
    address_allowance = providers.Dependency(
        instance_of=AddressAllowance, default=providers.Singleton(AddressAllowance.parse, "")
    )
    http = providers.Singleton(BoundedGet, address_allowance)
    prober = providers.Singleton(UrlProber, http)
    alert_source = providers.Singleton(PrometheusAlertSource, http)

    # --- the notifications, hung on the cluster's Events and on the metrics ---------------
    notifications = providers.Singleton(
        wire_notifications,
        notification_settings,
        events=cluster.provided.events,
        metrics=prometheus,
        registry=prometheus.provided.registry,
        pods=cluster.provided.pods,
        clock=clock,
    )
    events = providers.Singleton(notifying_events, cluster.provided.events, notifications)
    reported = providers.Singleton(notifying_metrics, notifications, prometheus)
    metrics = providers.Singleton(ControllerMetrics, rollout=reported, safety=reported)

    # --- what the replica reads: the mirrors, the policy, the gates, the census -----------
    log = providers.Singleton(replica_log, config.provided.identity)
    elector = providers.Singleton(
        LeaderElector,
        cluster.provided.leases,
        clock,
        namespace=config.provided.namespace,
        identity=config.provided.identity,
        name=config.provided.lease_name,
        lease_seconds=config.provided.lease_seconds,
        renew_seconds=config.provided.renew_seconds,
    )
    fleet = providers.Singleton(
        FleetMirror, cluster.provided.shadows, cluster.provided.nodes, config.provided.rollout_rules
    )
    follower = providers.Singleton(
        PolicyFollower, cluster.provided.policies, events, config.provided.namespace
    )
    health_checks = providers.Singleton(
        HealthChecks,
        nodes=cluster.provided.nodes,
        pods=cluster.provided.pods,
        workloads=cluster.provided.workloads,
        prober=prober,
    )
    safety = providers.Singleton(
        RolloutSafety,
        health_checks,
        alert_source,
        cluster.provided.nodes,
        clock,
        check_budget_seconds=config.provided.gate_check_budget_seconds,
    )
    offered_versions = providers.Singleton(OfferedVersions, config.provided.release_age_quorum)
    rules = providers.Singleton(
        PolicyRules,
        follower,
        safety,
        offered_versions,
        metrics.provided.rollout,
        metrics.provided.safety,
    )
    pod_census = providers.Singleton(PodCensus, cluster.provided.pods, cluster.provided.nodes)
    node_pods = providers.Singleton(NodePods, cluster.provided.pods, clock, log)
    starts = providers.Singleton(StartRules, fleet, pod_census, offered_versions, node_pods)
    mirrors = providers.Singleton(MirrorCatchUp, fleet, follower, config, clock, log)

    # --- what the replica writes, decides and publishes -----------------------------------
    journal = providers.Singleton(WriteJournal)
    failures = providers.Singleton(RecalledFailures)
    writer = providers.Singleton(
        RolloutWriter,
        cluster.provided.shadows,
        events,
        metrics.provided.rollout,
        config.provided.rollout_rules.timeouts,
        journal,
    )
    writes = providers.Singleton(
        LeaderWrites,
        elector=elector,
        fleet=fleet,
        writer=writer,
        cleanup=providers.Singleton(
            OptOutCleanup, cluster.provided.shadows, cluster.provided.nodes, events
        ),
        prestage=providers.Singleton(PrestageKeeper, cluster.provided.shadows, journal, events),
        autoscaler=providers.Singleton(
            AutoscalerGuard,
            cluster.provided.nodes,
            fleet.provided.nodes,
            clock,
            log,
            rescan_seconds=config.provided.resync_seconds,
        ),
        failures=failures,
        metrics=metrics.provided.safety,
    )
    reasons = providers.Singleton(NodeReasons, log)
    publisher = providers.Singleton(
        PassPublisher,
        fleet=fleet,
        config=config,
        reasons=reasons,
        rules=rules,
        starts=starts,
        failures=failures,
        metrics=metrics.provided.rollout,
    )
    rollout_pass = providers.Singleton(
        RolloutPass,
        fleet=fleet,
        rules=rules,
        starts=starts,
        writes=writes,
        publisher=publisher,
        pods=cluster.provided.pods,
        clock=clock,
        config=config,
        metrics=metrics.provided.rollout,
        log=log,
    )
    readout = providers.Singleton(
        StatusReadout,
        fleet=fleet,
        rules=rules,
        reasons=reasons,
        published=publisher,
        config=config,
        clock=clock,
    )

    # --- the service and its HTTP surface -------------------------------------------------
    replica = providers.Singleton(
        ControllerService,
        elector=elector,
        mirrors=mirrors,
        rollout_pass=rollout_pass,
        safety=safety,
        readout=readout,
        clock=clock,
        config=config,
        metrics=metrics.provided.rollout,
        log=log,
    )
    service = providers.Singleton(notices_read, replica, notifications)
    surface = providers.Singleton(
        Surface, metrics=prometheus.provided.exposition, controller=service
    )
    http_server = providers.Singleton(
        ControllerHttpServer,
        surface=surface,
        host=settings.bind_address,
        port=settings.metrics_port,
    )
    # Bound and serving while the container's resources are up (main: init to shutdown).
    serving = providers.Resource(serve_surface, http_server)


def controller_container(
    cluster: ControllerCluster,
    config: ControllerConfig,
    clock: Clock,
    metrics: ControllerMetrics | None = None,
) -> ControllerContainer:
    """The container of a replica over a given cluster and clock (tests, benchmarks, tools):
    `cluster` and `clock` overridden, and `metrics` (by default, quiet ones); no
    notifications (no webhook is set). Override more providers before asking for a part."""
    container = ControllerContainer(config=config)
    container.cluster.override(cluster)
    container.clock.override(clock)
    container.metrics.override(metrics or ControllerMetrics())
    return container


def build_controller(
    cluster: ControllerCluster,
    config: ControllerConfig,
    clock: Clock,
    metrics: ControllerMetrics | None = None,
) -> ControllerService:
    """A replica over a given cluster and clock: `controller_container`'s service."""
    return controller_container(cluster, config, clock, metrics).service()
