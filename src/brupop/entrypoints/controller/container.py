"""The controller's composition root: the whole graph of one `brupop controller` replica.

Settings in (`settings`, a Configuration loaded from ControllerSettings; `config`, the service's
ControllerConfig; `notification_settings`), then the cluster BRUPOP_CLUSTER chooses, the
notifications hung on its Events and the metrics, the ports, every part of the replica, the
service and its HTTP surface. Tests and `brupop simulate` swap a fake in by overriding a
provider (`container.cluster.override(...)`, `container.ports.override(...)`); `build_controller`
is the short way to do that for a service over given ports.
"""

from __future__ import annotations

from dataclasses import replace

import structlog
from dependency_injector import containers, providers

from brupop.adapters.http.bounded_get import BoundedGet
from brupop.adapters.http.prober import UrlProber
from brupop.adapters.http.prometheus import PrometheusAlertSource
from brupop.adapters.system.clock import SystemClock
from brupop.domain.policy.address_policy import AddressPolicy
from brupop.entrypoints.clusters import ClusterChoice
from brupop.entrypoints.controller.http_server import ControllerHttpServer, Surface
from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics
from brupop.entrypoints.controller.notification_settings import NotificationSettings
from brupop.entrypoints.controller.notifying_ports import (
    notices_read,
    notifying_metrics,
    notifying_ports,
    wire_notifications,
)
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.mirror_catch_up import MirrorCatchUp
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.mirrors.node_pods import NodePods
from brupop.services.controller.mirrors.pod_census import PodCensus
from brupop.services.controller.node_reasons import NodeReasons
from brupop.services.controller.pass_publishing import PassPublisher
from brupop.services.controller.policy.policy_follower import PolicyFollower
from brupop.services.controller.policy.policy_rules import PolicyRules
from brupop.services.controller.replica import ControllerMetrics, ControllerPorts
from brupop.services.controller.rollout_pass import PassParts, RolloutPass
from brupop.services.controller.runtime.leader_election import LeaderElector
from brupop.services.controller.safety.health_checks import HealthChecks
from brupop.services.controller.safety.rollout_safety import GatePorts, RolloutSafety
from brupop.services.controller.service import ControllerService, ReplicaParts, replica_log
from brupop.services.controller.starts.offered_versions import OfferedVersions
from brupop.services.controller.starts.start_rules import StartPorts, StartRules
from brupop.services.controller.status_readout import StatusReadout
from brupop.services.controller.writing.recalled_failures import RecalledFailures
from brupop.services.controller.writing.write_journal import WriteJournal

EVENT_COMPONENT = "brupop-controller"


def policy_follower(ports: ControllerPorts, namespace: str) -> PolicyFollower | None:
    """The update policies followed; None without a policy repository (the behaviour before)."""
    if ports.policies is None:
        return None
    return PolicyFollower(ports.policies, ports.events, namespace)


def start_ports(
    ports: ControllerPorts, versions: OfferedVersions, log: structlog.typing.FilteringBoundLogger
) -> StartPorts:
    """What the start rules read, with the defaults for what the ports leave out."""
    # The version gate reads the first-seen times that the policy rules keep.
    starts = replace(ports.starts or StartPorts(), versions=versions)
    if starts.census is None:  # listed only by a pass that can start a node
        starts = replace(starts, census=PodCensus(ports.pods, ports.nodes))
    if starts.pods is None:  # the blocking-pod rule reads the pods through a short cache
        starts = replace(starts, pods=NodePods(ports.pods, ports.clock, log))
    return starts


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
    prometheus = providers.Singleton(PrometheusRolloutMetrics, limit=config.provided.policy.limit)
    # Probes and Prometheus connect only where the address policy allows (docs/safety.md):
    # main gives the one PROBE_ALLOWED_NETWORKS lifts; by default, the refusals alone.
    address_policy = providers.Dependency(
        instance_of=AddressPolicy, default=providers.Singleton(AddressPolicy.parse, "")
    )
    http = providers.Singleton(BoundedGet, address_policy)
    health_checks = providers.Singleton(
        HealthChecks,
        nodes=cluster.provided.nodes,
        pods=cluster.provided.pods,
        workloads=cluster.provided.workloads,
        prober=providers.Singleton(UrlProber, http),
    )
    gates = providers.Singleton(
        GatePorts, health_checks, providers.Singleton(PrometheusAlertSource, http)
    )
    ports = providers.Singleton(
        ControllerPorts,
        shadows=cluster.provided.shadows,
        nodes=cluster.provided.nodes,
        pods=cluster.provided.pods,
        leases=cluster.provided.leases,
        events=cluster.provided.events,
        clock=clock,
        policies=cluster.provided.policies,
        gates=gates,
    )

    # --- the notifications, hung on the ports' Events and on the metrics ------------------
    notifications = providers.Singleton(
        wire_notifications,
        notification_settings,
        events=ports.provided.events,
        metrics=prometheus,
        registry=prometheus.provided.registry,
        pods=ports.provided.pods,
        clock=ports.provided.clock,
    )
    notified = providers.Singleton(notifying_ports, ports, notifications)
    reported = providers.Singleton(notifying_metrics, notifications, prometheus)
    metrics = providers.Singleton(ControllerMetrics, rollout=reported, safety=reported)

    # --- the replica's parts, over the ports ----------------------------------------------
    log = providers.Singleton(replica_log, config.provided.identity)
    elector = providers.Singleton(
        LeaderElector,
        notified.provided.leases,
        notified.provided.clock,
        namespace=config.provided.namespace,
        identity=config.provided.identity,
        name=config.provided.lease_name,
        lease_seconds=config.provided.lease_seconds,
        renew_seconds=config.provided.renew_seconds,
    )
    journal = providers.Singleton(WriteJournal)
    fleet = providers.Singleton(
        FleetMirror, notified.provided.shadows, notified.provided.nodes, config.provided.policy
    )
    reasons = providers.Singleton(NodeReasons, log)
    safety = providers.Singleton(
        RolloutSafety,
        notified.provided.gates,
        notified.provided.nodes,
        notified.provided.clock,
        check_budget_seconds=config.provided.gate_check_budget_seconds,
    )
    rules = providers.Singleton(
        PolicyRules,
        providers.Singleton(policy_follower, notified, config.provided.namespace),
        safety,
        metrics.provided.rollout,
        metrics.provided.safety,
        release_age_quorum=config.provided.release_age_quorum,
    )
    starts = providers.Singleton(
        StartRules, fleet, providers.Singleton(start_ports, notified, rules.provided.versions, log)
    )
    failures = providers.Singleton(RecalledFailures)
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
        notified,
        config,
        metrics,
        providers.Singleton(
            PassParts,
            elector=elector,
            fleet=fleet,
            rules=rules,
            starts=starts,
            journal=journal,
            failures=failures,
            publisher=publisher,
        ),
        log,
    )
    readout = providers.Singleton(
        StatusReadout,
        fleet=fleet,
        rules=rules,
        reasons=reasons,
        published=publisher,
        config=config,
        clock=notified.provided.clock,
    )
    mirrors = providers.Singleton(MirrorCatchUp, fleet, rules, config, notified.provided.clock, log)

    # --- the service and its HTTP surface -------------------------------------------------
    service = providers.Singleton(
        notices_read,
        providers.Singleton(
            ControllerService,
            providers.Singleton(
                ReplicaParts,
                elector=elector,
                journal=journal,
                fleet=fleet,
                rules=rules,
                mirrors=mirrors,
                rollout_pass=rollout_pass,
                readout=readout,
                clock=notified.provided.clock,
                log=log,
            ),
            config,
            metrics,
        ),
        notifications,
    )
    surface = providers.Singleton(
        Surface, metrics=prometheus.provided.exposition, controller=service
    )
    http_server = providers.Singleton(
        ControllerHttpServer,
        surface=surface,
        host=settings.bind_address,
        port=settings.metrics_port,
    )


def build_controller(
    ports: ControllerPorts, config: ControllerConfig, metrics: ControllerMetrics | None = None
) -> ControllerService:
    """A replica over given ports (tests, benchmarks): the container with `ports` and `metrics`
    overridden (and no notifications: no webhook is set)."""
    container = ControllerContainer(config=config)
    container.ports.override(ports)
    container.metrics.override(metrics or ControllerMetrics())
    return container.service()
