"""The tests' servers get ports below the ephemeral range, never one a socket holds, and parallel
workers never share one."""

from __future__ import annotations

import itertools
import socket

import pytest

from tests.support import ports


def test_a_free_port_is_below_the_ephemeral_range_and_can_be_bound() -> None:
    port = ports.free_port()

    assert ports.LOWEST_PORT <= port <= ports.HIGHEST_PORT
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))


def test_a_port_some_socket_holds_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        taken = held.getsockname()[1]
        monkeypatch.setattr(ports, "_walk", iter([taken, ports.free_port()]))

        port = ports.free_port()

    assert port != taken


def test_parallel_workers_walk_different_ports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    walks = {}
    for worker in ("gw0", "gw1"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        walks[worker] = set(itertools.islice(ports._ports_of_this_process(), 3000))

    assert walks["gw0"].isdisjoint(walks["gw1"])
    assert all(
        ports.LOWEST_PORT <= port <= ports.HIGHEST_PORT for port in walks["gw0"] | walks["gw1"]
    )


def test_one_process_walks_every_port_of_its_share_before_any_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "4")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    share = (ports._end() - ports.LOWEST_PORT) // 4

    walked = list(itertools.islice(ports._ports_of_this_process(), share))

    assert len(set(walked)) == share
