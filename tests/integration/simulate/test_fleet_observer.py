"""The simulation's fleet observer keeps watching when the cluster answers late, and when its
watch meets an error nobody expected."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import Listing, WatchEvent
from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import UnavailableError
from brupop.simulation.fleet.observer import FleetObserver
from tests.support.polling import wait_until


class LateFirstWatch:
    """The cluster's shadows, whose first watch fails (as a read timing out, or with `error`)
    once the test has made its changes."""

    def __init__(self, cluster: InMemoryCluster, error: Exception | None = None) -> None:
        self._shadows = cluster.shadows
        self.changes_made = threading.Event()
        self._failed = False
        self._error = error or UnavailableError(
            "watch shadows: the Kubernetes API did not answer: timed out"
        )

    def list(self) -> Listing[Shadow]:
        return self._shadows.list()

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[Shadow]]:
        if not self._failed:
            self._failed = True
            self.changes_made.wait(5)
            raise self._error
        return self._shadows.watch(resource_version, timeout_seconds)

    def __getattr__(self, name: str) -> object:
        return getattr(self._shadows, name)


@pytest.mark.parametrize(
    "error",
    [None, RuntimeError("a bug in a watch")],
    ids=["the cluster answers late", "an unexpected error"],
)
def test_a_failed_watch_is_resumed_without_missing_the_states_in_between(
    error: Exception | None,
) -> None:
    cluster = InMemoryCluster()
    cluster.add_node("n1")
    cluster.shadows.create("n1", cluster.nodes.get("n1").uid)
    shadows = LateFirstWatch(cluster, error)
    observer = FleetObserver(shadows, ["n1"])  # type: ignore[arg-type]
    observer.start()
    try:
        staged = ShadowSpec(state=UpdateState.STAGED_AND_PERFORMED_UPDATE, version="1.20.0")
        cluster.shadows.replace_spec("brs-n1", staged, None)
        cluster.shadows.replace_spec("brs-n1", ShadowSpec(version="1.20.0"), None)
        shadows.changes_made.set()
        wait_until(lambda: observer.max_active > 0, "the node's time outside Idle seen")
    finally:
        observer.stop()

    assert observer.max_active == 1  # the node's time outside Idle was seen after the failure
    assert observer.views()["n1"].spec_state is UpdateState.IDLE


def test_a_preparation_ahead_is_seen_from_the_request_until_the_host_holds_the_version() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("n1")
    cluster.shadows.create("n1", cluster.nodes.get("n1").uid)
    idle = ShadowStatus(
        current_version="1.19.0", target_version="1.20.0", current_state=UpdateState.IDLE
    )
    cluster.shadows.update_status("brs-n1", idle)
    observer = FleetObserver(cluster.shadows, ["n1"])
    observer.start()
    try:
        cluster.shadows.replace_spec("brs-n1", ShadowSpec(prestage_version="1.20.0"), None)
        wait_until(lambda: observer.views()["n1"].preparing_ahead, "the preparation seen")
        held = idle.model_copy(update={"staged_version": "1.20.0", "staged_state": "Staged"})
        cluster.shadows.update_status("brs-n1", held)
        wait_until(lambda: not observer.views()["n1"].preparing_ahead, "the version held")
    finally:
        observer.stop()

    assert observer.max_active == 0  # a preparation ahead holds no slot
    assert [c.after.preparing_ahead for c in observer.history()][-2:] == [True, False]
