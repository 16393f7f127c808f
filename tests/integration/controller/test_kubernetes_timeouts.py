"""The controller's Kubernetes calls wait no longer than its Lease allows: each call's timeout
is half the renew deadline (LEADER_ELECTION_LEASE_SECONDS - _RENEW_SECONDS), a Lease call's
half the renew interval, so a silent API server cannot hold a pass or a renew past the
moment the leader must have renewed. Against a loopback server that accepts and never answers,
wired as `brupop controller` wires it (BRUPOP_CLUSTER=kubernetes, a kubeconfig)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import structlog

from brupop.entrypoints.controller.container import ControllerContainer
from brupop.entrypoints.controller.settings import load_settings
from brupop.ports.errors import UnavailableError
from brupop.services.controller.runtime.leader_election import DEFAULT_LEASE_NAME
from tests.support.kubeconfig import use_kubeconfig
from tests.support.polling import wait_until
from tests.support.silent_server import SilentServer

LEASE, RENEW = 12, 2  # a call waits at most 5 s, a Lease call 1 s


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    with SilentServer() as server:
        yield server


@pytest.fixture
def container(
    silent: SilentServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[ControllerContainer]:
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


def _how_it_failed(call: Callable[[], object], silent: SilentServer, tries: int = 1) -> str:
    """What ended `call` against the silent server (urllib3 names the read timeout it was
    given), after checking it made `tries` connections: no retry waits a timeout again."""
    with pytest.raises(UnavailableError) as failed:
        call()
    wait_until(lambda: silent.accepted >= tries, "the call's connections accepted")
    assert silent.accepted == tries, f"{silent.accepted} tries"
    return str(failed.value.__cause__)


def test_the_timeouts_come_from_the_lease_settings(container: ControllerContainer) -> None:
    config = container.config()

    assert config.kubernetes_timeout_seconds == (LEASE - RENEW) / 2
    assert config.lease_timeout_seconds == RENEW / 2


def test_a_read_from_a_silent_api_gives_up_within_half_the_renew_deadline(
    container: ControllerContainer, silent: SilentServer
) -> None:
    ended_by = _how_it_failed(lambda: container.cluster().nodes.get("node-a"), silent)

    assert f"read timeout={(LEASE - RENEW) / 2}" in ended_by  # 5.0, not the client's 30 s


def test_a_lease_read_from_a_silent_api_gives_up_within_half_the_renew_interval(
    container: ControllerContainer, silent: SilentServer
) -> None:
    cluster = container.cluster()

    ended_by = _how_it_failed(
        lambda: cluster.leases.get(cluster.namespace, DEFAULT_LEASE_NAME), silent
    )

    assert f"read timeout={RENEW / 2}" in ended_by  # 1.0, not a call's 5 s


def test_a_tick_against_a_silent_api_ends_before_the_renew_deadline(
    container: ControllerContainer, silent: SilentServer
) -> None:
    service = container.service()

    with structlog.testing.capture_logs() as lines:
        ended_by = _how_it_failed(service.tick, silent, tries=2)

    # Two calls: the Lease's, given up after its 1 s (logged), then a read ended by its 5 s:
    # 6 s in all, within the 10 s before the leader must have renewed.
    assert "leader.lease_unavailable" in [line["event"] for line in lines]
    assert f"read timeout={(LEASE - RENEW) / 2}" in ended_by
    assert RENEW / 2 + (LEASE - RENEW) / 2 < LEASE - RENEW
    assert not service.elector.is_leader()
