"""The apiserver's wiring: settings -> cluster adapter (BRUPOP_CLUSTER) -> app."""

from __future__ import annotations

from typing import Any

from dependency_injector import containers, providers

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.system.clock import SystemClock
from brupop.entrypoints.apiserver.app import ApiserverOptions, build_apiserver_app
from brupop.entrypoints.apiserver.settings import ApiserverSettings
from brupop.ports.clock import Clock

EVENT_COMPONENT = "brupop-apiserver"


def choose_cluster(kind: str, namespace: str, clock: Clock) -> Any:
    """The cluster BRUPOP_CLUSTER names; the Kubernetes client is imported only when used.

    UnavailableError when `kubernetes` is chosen and no configuration is found.
    """
    if kind == "memory":
        return InMemoryCluster(namespace, clock=clock)
    from brupop.adapters.kubernetes.cluster import KubernetesCluster

    return KubernetesCluster.from_environment(namespace, component=EVENT_COMPONENT)


def options_from(settings: ApiserverSettings) -> ApiserverOptions:
    """The app's options from the environment's settings."""
    return ApiserverOptions(
        namespace=settings.namespace,
        drain=settings.drain_timings(),
        token_review_cache_seconds=settings.token_review_cache_seconds,
        token_refusal_cache_seconds=settings.token_refusal_cache_seconds,
        review_threads=settings.token_review_threads,
        webhook_port=settings.webhook_port,
    )


class ApiserverContainer(containers.DeclarativeContainer):
    """Providers for one `brupop apiserver` process."""

    settings = providers.Dependency(instance_of=ApiserverSettings)
    clock = providers.Singleton(SystemClock)
    cluster = providers.Singleton(
        choose_cluster,
        kind=settings.provided.cluster,
        namespace=settings.provided.namespace,
        clock=clock,
    )
    options = providers.Singleton(options_from, settings=settings)
    app = providers.Singleton(build_apiserver_app, cluster=cluster, options=options, clock=clock)
