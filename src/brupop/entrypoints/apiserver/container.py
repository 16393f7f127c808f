"""The apiserver's wiring: settings -> cluster adapter (BRUPOP_CLUSTER) -> app."""

from __future__ import annotations

import importlib
from typing import Any

from dependency_injector import containers, providers

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.system.clock import SystemClock
from brupop.entrypoints.apiserver.app import ApiserverOptions, build_apiserver_app
from brupop.entrypoints.apiserver.settings import ApiserverSettings
from brupop.ports.clock import Clock

KUBERNETES_CLUSTER = "brupop.adapters.kubernetes.cluster"


class ClusterChoiceError(RuntimeError):
    """BRUPOP_CLUSTER names a cluster this build cannot reach."""


def choose_cluster(kind: str, namespace: str, clock: Clock) -> Any:
    """The cluster adapter BRUPOP_CLUSTER asks for."""
    if kind == "memory":
        return InMemoryCluster(namespace, clock=clock)
    try:
        module = importlib.import_module(KUBERNETES_CLUSTER)
    except ModuleNotFoundError as error:
        if error.name != KUBERNETES_CLUSTER:
            raise
        raise ClusterChoiceError(
            "BRUPOP_CLUSTER=kubernetes: this build has no Kubernetes cluster adapter yet"
        ) from None
    return module.KubernetesCluster(namespace=namespace)


def options_from(settings: ApiserverSettings) -> ApiserverOptions:
    """The app's options from the environment's settings."""
    return ApiserverOptions(
        namespace=settings.namespace,
        drain=settings.drain_timings(),
        token_review_cache_seconds=settings.token_review_cache_seconds,
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
