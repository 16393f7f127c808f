"""The container's background workers start with the app's lifespan and stop at its end: the
shadow feed, the conversion worker, then (local token verification) the agent pod mirror; the
feed and the mirror stop without waiting for their threads."""

from __future__ import annotations

import anyio
import pytest
from dependency_injector import providers

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.entrypoints.apiserver.container import ApiserverContainer

NS = "brupop-bottlerocket-aws"


class Worker:
    """A stand-in for a worker that writes what it was asked to do into a shared log."""

    def __init__(self, name: str, log: list[str]) -> None:
        self._name = name
        self._log = log

    def start(self) -> None:
        self._log.append(f"{self._name} start")

    def stop(self, wait_seconds: float | None = None) -> None:
        waited = "" if wait_seconds is None else f" wait={wait_seconds}"
        self._log.append(f"{self._name} stop{waited}")


def container_over_workers(verification: str, log: list[str]) -> ApiserverContainer:
    container = ApiserverContainer(
        options=ApiserverOptions(namespace=NS, token_verification=verification)
    )
    container.cluster.override(InMemoryCluster(NS))
    container.feed.override(providers.Object(Worker("feed", log)))
    container.conversion.override(providers.Object(Worker("conversion", log)))
    if verification == "local":
        container.agent_pods.override(providers.Object(Worker("pods", log)))
    return container


def serve_once(container: ApiserverContainer, log: list[str]) -> None:
    """The app's lifespan, with one mark in the log while it serves."""

    async def lifespan() -> None:
        app = container.app()
        async with app.router.lifespan_context(app):
            log.append("serving")

    anyio.run(lifespan)


def test_local_verification_runs_the_feed_the_conversion_worker_and_the_pod_mirror() -> None:
    log: list[str] = []

    serve_once(container_over_workers("local", log), log)

    assert log == [
        "feed start",
        "conversion start",
        "pods start",
        "serving",
        "feed stop wait=0",
        "pods stop wait=0",
        "conversion stop",
    ]


def test_tokenreview_runs_the_feed_and_the_conversion_worker_only() -> None:
    log: list[str] = []

    serve_once(container_over_workers("tokenreview", log), log)

    assert log == [
        "feed start",
        "conversion start",
        "serving",
        "feed stop wait=0",
        "conversion stop",
    ]


def test_a_worker_that_cannot_start_fails_the_apps_start() -> None:
    log: list[str] = []
    container = container_over_workers("tokenreview", log)

    class Unstartable(Worker):
        def start(self) -> None:
            raise RuntimeError("no conversion worker")

    container.conversion.override(providers.Object(Unstartable("conversion", log)))

    with pytest.raises(RuntimeError, match="no conversion worker"):
        serve_once(container, log)
    assert "serving" not in log
