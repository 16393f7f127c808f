"""The controller's Kubernetes calls wait no longer than its Lease allows: each call's timeout
is half the renew deadline (LEADER_ELECTION_LEASE_SECONDS - _RENEW_SECONDS), a Lease call's
half the renew interval, so a silent API server cannot hold a pass or a renew past the
moment the leader must have renewed. Against a loopback server that accepts and never answers,
wired as `brupop controller` wires it (BRUPOP_CLUSTER=kubernetes, a kubeconfig)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from brupop.entrypoints.controller.container import ControllerContainer
from brupop.entrypoints.controller.settings import load_settings
from brupop.ports.errors import PortError, UnavailableError
from brupop.services.controller.runtime.leader_election import DEFAULT_LEASE_NAME
from tests.support.kubeconfig import use_kubeconfig
from tests.support.silent_server import SilentServer

LEASE, RENEW = 12, 2  # a call waits at most 5 s, a Lease call 1 s
# What a loaded machine may add to a timeout: less than the gap to the next longer one (a
# Lease call's 1 s to a call's 5 s, a call's 5 s to the client's default of 30 s), so that
# each bound still tells which timeout ended the wait.
SLACK = 3.5


@pytest.fixture
def container(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ControllerContainer]:
    with SilentServer() as silent:
        use_kubeconfig(monkeypatch, tmp_path / "config", silent.url)
        for name, value in {
            "BRUPOP_CLUSTER": "kubernetes",
            "MY_NODE_NAME": "node-a",
            "LEADER_ELECTION_LEASE_SECONDS": str(LEASE),
            "LEADER_ELECTION_RENEW_SECONDS": str(RENEW),
        }.items():
            monkeypatch.setenv(name, value)
        settings, config = load_settings()
        built = ControllerContainer(config=config, address_allowance=settings.address_allowance)
        built.settings.from_dict(settings.model_dump())
        yield built
        built.cluster().close()


def _seconds_to_fail(call: Callable[[], object]) -> float:
    started = time.monotonic()
    with pytest.raises(UnavailableError):
        call()
    return time.monotonic() - started


def test_the_timeouts_come_from_the_lease_settings(container: ControllerContainer) -> None:
    config = container.config()

    assert config.kubernetes_timeout_seconds == (LEASE - RENEW) / 2
    assert config.lease_timeout_seconds == RENEW / 2


def test_a_read_from_a_silent_api_gives_up_within_half_the_renew_deadline(
    container: ControllerContainer,
) -> None:
    took = _seconds_to_fail(lambda: container.cluster().nodes.get("node-a"))

    assert (LEASE - RENEW) / 2 - 0.1 <= took < (LEASE - RENEW) / 2 + SLACK < 30


def test_a_lease_read_from_a_silent_api_gives_up_within_half_the_renew_interval(
    container: ControllerContainer,
) -> None:
    cluster = container.cluster()

    took = _seconds_to_fail(lambda: cluster.leases.get(cluster.namespace, DEFAULT_LEASE_NAME))

    assert RENEW / 2 - 0.1 <= took < RENEW / 2 + SLACK < (LEASE - RENEW) / 2


def test_a_tick_against_a_silent_api_ends_before_the_renew_deadline(
    container: ControllerContainer,
) -> None:
    service = container.service()
    started = time.monotonic()

    with contextlib.suppress(PortError):  # the cluster cannot be read: the loop tries again
        service.tick()
    took = time.monotonic() - started

    assert took < LEASE - RENEW, f"one tick took {took:.2f} s"
    assert not service.elector.is_leader()
