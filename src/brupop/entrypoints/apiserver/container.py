"""The apiserver's composition root: the whole graph of one `brupop apiserver` process.

Settings in (`settings`, a Configuration loaded from ApiserverSettings; `options`, the app's
ApiserverOptions), then the cluster BRUPOP_CLUSTER chooses, every service over its ports, and
the Starlette app around them; the background workers are the container's one Resource, which
the app's lifespan initializes and shuts down. Tests swap a fake in by overriding a provider
(`container.token_verifier.override(...)`, or `token_reviewer` under
`token_verification="tokenreview"`); `apiserver_container` is the short way to build the
container over a given cluster (the integration tests read services from its providers), and
`build_apiserver_app` its app (`brupop simulate`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import anyio.to_thread
from dependency_injector import containers, providers
from starlette.applications import Starlette

from brupop.adapters.apiserver_http.app import (
    ApiserverOptions,
    ThreadLimit,
    starlette_app,
)
from brupop.adapters.apiserver_http.conversion.by_size import ConversionBySize
from brupop.adapters.apiserver_http.conversion.worker_process import ConversionWorker
from brupop.adapters.apiserver_http.routes.closing import Closing
from brupop.adapters.apiserver_http.routes.conversion_webhook import ConversionRoute
from brupop.adapters.apiserver_http.routes.handlers import Handlers
from brupop.adapters.apiserver_http.routes.metrics import ApiserverMetrics
from brupop.adapters.system.clock import SystemClock
from brupop.domain.policy.drain_rules import protected_namespaces
from brupop.entrypoints.apiserver.settings import ApiserverSettings
from brupop.entrypoints.clusters import ApiserverCluster, ClusterChoice
from brupop.ports.clock import Clock
from brupop.ports.tokens.token_reviewer import TokenReviewer
from brupop.services.apiserver.authorization.authorizer import Authorizer
from brupop.services.apiserver.authorization.pods import AgentPodMirror
from brupop.services.apiserver.drain.drainer import Drainer
from brupop.services.apiserver.drain.evicted_workloads import EvictedWorkloadRecorder
from brupop.services.apiserver.drain.forced_removal import ForcedRemoval
from brupop.services.apiserver.drain.node_actions import NodeActions
from brupop.services.apiserver.drain.policy_source import DrainPolicySource
from brupop.services.apiserver.drain.registry import DrainRegistry
from brupop.services.apiserver.shadow_feed import ShadowFeed
from brupop.services.apiserver.status_reports import StatusReports

EVENT_COMPONENT = "brupop-apiserver"


def options_from(settings: ApiserverSettings) -> ApiserverOptions:
    """The app's options from the environment's settings."""
    return ApiserverOptions(
        namespace=settings.namespace,
        drain=settings.drain_timings(),
        token_review_cache_seconds=settings.token_review_cache_seconds,
        token_refusal_cache_seconds=settings.token_refusal_cache_seconds,
        token_verification=settings.token_verification,
        review_threads=settings.token_review_threads,
        webhook_port=settings.webhook_port,
        force_namespaces_allowed=settings.force_namespaces_allowed,
    )


def authorization_problem(mirror: AgentPodMirror | None) -> Callable[[], str | None]:
    """Why agents cannot be authorized now, for readiness: local verification's problem (its
    issuer keys, its pod watch or its ServiceAccount watch); TokenReview has none of its own."""
    if mirror is None:
        return lambda: None
    return lambda: mirror.problem


async def background_workers(
    feed: ShadowFeed, conversion: ConversionBySize, agent_pods: AgentPodMirror | None
) -> AsyncIterator[None]:
    """The workers that run while the app serves: the shadow feed, the conversion worker and
    (local token verification) the agent pod mirror. They stop without waiting for their
    threads; the conversion worker's process is stopped off the event loop."""
    feed.start()
    conversion.start()
    if agent_pods is not None:
        agent_pods.start()
    try:
        yield
    finally:
        feed.stop(wait_seconds=0)
        if agent_pods is not None:
            agent_pods.stop(wait_seconds=0)
        await anyio.to_thread.run_sync(conversion.stop)


@dataclass(frozen=True)
class ContainerResources:
    """The container's resources (its background workers), started and stopped by the app's
    lifespan (the app's `BackgroundWork`)."""

    container: containers.Container

    async def start(self) -> None:
        started = self.container.init_resources()
        if started is not None:
            await started

    async def stop(self) -> None:
        stopped = self.container.shutdown_resources()
        if stopped is not None:
            await stopped


class ApiserverContainer(containers.DeclarativeContainer):
    """Providers for one `brupop apiserver` process (Singletons: one container, one app)."""

    __self__ = providers.Self()
    settings = providers.Configuration(strict=True)
    options = providers.Dependency(instance_of=ApiserverOptions, default=ApiserverOptions())

    # --- the outside world: the cluster and the clock --------------------------------------
    clock = providers.Singleton(SystemClock)
    clusters = providers.Container(
        ClusterChoice,
        kind=settings.cluster,
        namespace=settings.namespace,
        component=EVENT_COMPONENT,
        clock=clock,
    )
    cluster = clusters.cluster
    token_reviewer = cluster.provided.token_reviewer
    token_verifier = cluster.provided.token_verifier
    # --- how agents' tokens are checked (APISERVER_TOKEN_VERIFICATION) -------------------
    agent_pods = providers.Selector(
        options.provided.token_verification,
        local=providers.Singleton(
            AgentPodMirror,
            cluster.provided.agent_pods,
            cluster.provided.service_accounts,
            token_verifier,
        ),
        tokenreview=providers.Object(None),
    )
    token_checker: providers.Provider[TokenReviewer] = providers.Selector(
        options.provided.token_verification, local=token_verifier, tokenreview=token_reviewer
    )

    # --- the services over its ports ------------------------------------------------------
    actions = providers.Singleton(NodeActions, cluster.provided.nodes)
    drainer = providers.Singleton(
        Drainer,
        actions=actions,
        pods=cluster.provided.pods,
        clock=clock,
        timings=options.provided.drain,
        recorder=providers.Singleton(
            EvictedWorkloadRecorder, cluster.provided.nodes, cluster.provided.workloads
        ),
        policy=providers.Singleton(
            DrainPolicySource,
            cluster.provided.policies,
            clock,
            cache_seconds=options.provided.drain_policy_cache_seconds,
            protected_namespaces=providers.Callable(
                protected_namespaces,
                options.provided.namespace,
                options.provided.force_namespaces_allowed,
            ),
        ),
        forced=providers.Singleton(ForcedRemoval, cluster.provided.pods, cluster.provided.events),
    )
    drains = providers.Singleton(
        DrainRegistry,
        drainer.provided.drain,
        clock,
        outcome_seconds=options.provided.drain_outcome_seconds,
    )
    feed = providers.Singleton(
        ShadowFeed,
        cluster.provided.shadows,
        watch_seconds=options.provided.feed_watch_seconds,
        restart=options.provided.feed_restart,
    )
    reports = providers.Singleton(
        StatusReports,
        cluster.provided.shadows,
        feed,
        cluster.provided.nodes,
        clock,
        options.provided.status_pacing,
    )
    authorizer = providers.Singleton(
        Authorizer,
        token_reviewer=token_checker,
        pods=cluster.provided.pods,
        nodes=cluster.provided.nodes,
        clock=clock,
        namespace=options.provided.namespace,
        cache_seconds=options.provided.token_review_cache_seconds,
        refusal_seconds=options.provided.token_refusal_cache_seconds,
        agent_pods=agent_pods,
    )
    metrics = providers.Singleton(ApiserverMetrics, drains.provided.in_progress)
    # Shadows' reviews converted here; larger ones by a worker process started for the first.
    conversion = providers.Singleton(
        ConversionBySize, providers.Singleton(ConversionWorker, options.provided.conversion)
    )
    closing = providers.Singleton(Closing)

    # --- the HTTP surface -----------------------------------------------------------------
    handlers = providers.Singleton(
        Handlers,
        shadows=cluster.provided.shadows,
        reports=reports,
        actions=actions,
        drains=drains,
        feed=feed,
        closing=closing,
        conversion=conversion,
        limiter=providers.Singleton(ThreadLimit, options.provided.threads),
        longest_wait_seconds=options.provided.longest_wait_seconds,
        drain_wait_seconds=options.provided.drain_wait_seconds,
        authorization_problem=providers.Callable(authorization_problem, agent_pods),
    )
    # Started by the app's lifespan (init_resources), stopped at its end (shutdown_resources).
    workers = providers.Resource(background_workers, feed, conversion, agent_pods)
    app = providers.Singleton(
        starlette_app,
        handlers=handlers,
        authorizer=authorizer,
        metrics=metrics,
        conversion=providers.Singleton(ConversionRoute, conversion, closing=closing),
        closing=closing,
        background=providers.Singleton(ContainerResources, __self__),
        options=options,
        review_threads=providers.Singleton(ThreadLimit, options.provided.review_threads),
    )


def apiserver_container(
    *, cluster: ApiserverCluster, options: ApiserverOptions, clock: Clock | None = None
) -> ApiserverContainer:
    """The container over `cluster`'s ports (and `clock`): its `app()` is the apiserver, and
    its other providers (`feed()`, `drains()`, `metrics()`, ...) the services under it."""
    container = ApiserverContainer(options=options)
    container.cluster.override(cluster)
    if clock is not None:
        container.clock.override(clock)
    return container


def build_apiserver_app(
    *, cluster: ApiserverCluster, options: ApiserverOptions, clock: Clock | None = None
) -> Starlette:
    """The app over `cluster`'s ports: the container with its cluster (and clock) overridden."""
    app: Starlette = apiserver_container(cluster=cluster, options=options, clock=clock).app()
    return app
