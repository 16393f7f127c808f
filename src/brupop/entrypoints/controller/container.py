"""The controller's wiring: settings -> cluster adapter (BRUPOP_CLUSTER) -> service -> HTTP."""

from __future__ import annotations

from typing import Any

from dependency_injector import containers, providers

from brupop.adapters.http.bounded_get import BoundedGet
from brupop.adapters.http.prober import UrlProber
from brupop.adapters.http.prometheus import PrometheusAlertSource
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.system.clock import SystemClock
from brupop.domain.policy.address_policy import AddressPolicy
from brupop.entrypoints.controller.http_server import ControllerHttpServer, Surface
from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics
from brupop.entrypoints.controller.notification_settings import NotificationSettings
from brupop.entrypoints.controller.notifying_ports import wire_notifications
from brupop.entrypoints.controller.settings import ControllerSettings
from brupop.ports.clock import Clock
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.safety.health_checks import HealthChecks
from brupop.services.controller.safety.rollout_safety import GatePorts
from brupop.services.controller.service import ControllerService

EVENT_COMPONENT = "brupop-controller"


def choose_cluster(kind: str, namespace: str, clock: Clock) -> Any:
    """The cluster BRUPOP_CLUSTER names; the Kubernetes client is imported only when used."""
    if kind == "memory":
        return InMemoryCluster(namespace, clock=clock)
    from brupop.adapters.kubernetes.cluster import KubernetesCluster

    return KubernetesCluster.from_environment(namespace, component=EVENT_COMPONENT)


def build_service(
    cluster: Any,
    clock: Clock,
    config: ControllerConfig,
    metrics: PrometheusRolloutMetrics,
    notifications: NotificationSettings | None = None,
    gates: GatePorts | None = None,
) -> ControllerService:
    """The controller service over the chosen cluster's ports (their Events and metrics also
    feeding the webhooks, when some are configured)."""
    wiring = wire_notifications(
        notifications or NotificationSettings(),
        events=cluster.events,
        metrics=metrics,
        registry=metrics.registry,
        pods=cluster.pods,
        clock=clock,
    )
    service = ControllerService(
        shadows=cluster.shadows,
        nodes=cluster.nodes,
        pods=cluster.pods,
        leases=cluster.leases,
        events=wiring.events if wiring else cluster.events,
        clock=clock,
        config=config,
        metrics=wiring.metrics if wiring else metrics,
        policies=cluster.policies,
        gates=gates or build_gates(cluster),
        safety_metrics=wiring.metrics if wiring else metrics,
    )
    if wiring is not None:
        wiring.notices.read_reports_from(service.reports)
    return service


def build_gates(cluster: Any, policy: AddressPolicy | None = None) -> GatePorts:
    """The health gate's checks over the cluster's ports, HTTP probes and Prometheus, both
    reaching only where `policy` allows (by default: the SSRF refusals alone)."""
    http = BoundedGet(policy)
    checks = HealthChecks(
        nodes=cluster.nodes, pods=cluster.pods, workloads=cluster.workloads, prober=UrlProber(http)
    )
    return GatePorts(checks, PrometheusAlertSource(http))


def build_metrics(config: ControllerConfig) -> PrometheusRolloutMetrics:
    """The rollout's collectors; the limit reads MAX_CONCURRENT_UPDATE until the first pass
    sets the one it applies."""
    metrics = PrometheusRolloutMetrics()
    metrics.set_concurrency_limit(config.policy.limit.maximum)
    return metrics


def build_surface(metrics: PrometheusRolloutMetrics, service: ControllerService) -> Surface:
    return Surface(metrics=metrics.exposition, controller=service)


class ControllerContainer(containers.DeclarativeContainer):
    """Providers for one `brupop controller` process."""

    settings = providers.Dependency(instance_of=ControllerSettings)
    config = providers.Dependency(instance_of=ControllerConfig)
    notifications = providers.Dependency(
        instance_of=NotificationSettings, default=NotificationSettings()
    )
    clock = providers.Singleton(SystemClock)
    cluster = providers.Singleton(
        choose_cluster,
        kind=settings.provided.cluster,
        namespace=settings.provided.namespace,
        clock=clock,
    )
    metrics = providers.Singleton(build_metrics, config=config)
    gates = providers.Singleton(
        build_gates, cluster=cluster, policy=settings.provided.address_policy
    )
    service = providers.Singleton(
        build_service,
        cluster=cluster,
        clock=clock,
        config=config,
        metrics=metrics,
        notifications=notifications,
        gates=gates,
    )
    surface = providers.Singleton(build_surface, metrics=metrics, service=service)
    http_server = providers.Singleton(
        ControllerHttpServer,
        surface=surface,
        host=settings.provided.bind_address,
        port=settings.provided.metrics_port,
    )
