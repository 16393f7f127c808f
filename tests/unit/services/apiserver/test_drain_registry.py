"""DrainRegistry: one drain per node at a time; later requests join it or hear its outcome."""

from __future__ import annotations

import threading

import pytest

from brupop.ports.errors import DrainFailedError, UnavailableError
from brupop.services.apiserver.drain.drainer import DrainReport
from brupop.services.apiserver.drain.registry import DrainRegistry
from tests.fakes.clock import FakeClock


class GatedDrain:
    """A drain that runs until the test opens its gate, counting how often it started."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.runs: list[str] = []
        self.error: Exception | None = None

    def __call__(self, node_name: str) -> DrainReport:
        self.runs.append(node_name)
        assert self.gate.wait(5)
        if self.error is not None:
            raise self.error
        return DrainReport(node_name, evicted=["apps/web"])


def test_a_second_request_joins_the_running_drain() -> None:
    drain = GatedDrain()
    registry = DrainRegistry(drain, FakeClock())

    first = registry.request("n1")
    second = registry.request("n1")
    assert registry.in_progress() == 1
    drain.gate.set()

    assert first is second
    assert first.result(5).evicted == ["apps/web"]
    assert drain.runs == ["n1"]
    assert registry.in_progress() == 0


def test_drains_of_different_nodes_run_side_by_side() -> None:
    drain = GatedDrain()
    registry = DrainRegistry(drain, FakeClock())

    one, two = registry.request("n1"), registry.request("n2")
    assert registry.in_progress() == 2
    drain.gate.set()

    assert one.result(5).node_name == "n1"
    assert two.result(5).node_name == "n2"


def test_a_failed_drain_is_answered_to_late_requests_until_the_outcome_expires() -> None:
    drain = GatedDrain()
    drain.error = DrainFailedError("apps/db-0 blocked", blockers=("apps/db-0",))
    drain.gate.set()
    clock = FakeClock()
    registry = DrainRegistry(drain, clock, outcome_seconds=60)
    with pytest.raises(DrainFailedError):
        registry.request("n1").result(5)

    with pytest.raises(DrainFailedError):
        registry.request("n1").result(5)
    assert drain.runs == ["n1"]

    clock.advance(61)
    with pytest.raises(DrainFailedError):
        registry.request("n1").result(5)
    assert drain.runs == ["n1", "n1"]


def test_forgetting_an_outcome_makes_the_next_request_drain_again() -> None:
    drain = GatedDrain()
    drain.gate.set()
    registry = DrainRegistry(drain, FakeClock())
    registry.request("n1").result(5)

    registry.forget("n1")
    registry.request("n1").result(5)

    assert drain.runs == ["n1", "n1"]


def test_a_cluster_error_is_not_remembered_so_the_next_request_tries_again() -> None:
    drain = GatedDrain()
    drain.error = UnavailableError("pods could not be listed")
    drain.gate.set()
    registry = DrainRegistry(drain, FakeClock())
    with pytest.raises(UnavailableError):
        registry.request("n1").result(5)

    drain.error = None
    assert registry.request("n1").result(5).node_name == "n1"
    assert registry.started == 2
