"""HttpProber behaviour, the same for the in-memory prober and for real GETs on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import pytest

from brupop.adapters.http.prober import UrlProber
from brupop.adapters.memory.gates import InMemoryHttpProber, Reach
from brupop.domain.policy.address_allowance import AddressAllowance
from brupop.domain.policy.probe_url import fill_probe_template
from brupop.ports.monitoring.http_prober import HttpProber
from tests.support.loopback_reach import LOOPBACK_ALLOWANCE, loopback_http
from tests.support.probe_server import BIG_PATH, SLOW_PATH, ProbeServer

TEMPLATE = "http://{node_ip}:PORT/healthz/{node_name}"


class ProbeTargets(Protocol):
    """A prober and the means to make URLs answer."""

    prober: HttpProber
    port: int

    def serve(self, path: str, status: int) -> str: ...
    def stalled(self) -> str: ...
    def still_stalling(self) -> bool: ...
    def huge(self) -> str: ...
    def closed(self) -> str: ...


class MemoryTargets:
    def __init__(self) -> None:
        self.memory = InMemoryHttpProber(Reach(AddressAllowance.parse(LOOPBACK_ALLOWANCE)))
        self.prober: HttpProber = self.memory
        self.port = 8080

    def serve(self, path: str, status: int) -> str:
        url = f"http://127.0.0.1:{self.port}{path}"
        self.memory.answer(url, status=status)
        return url

    def stalled(self) -> str:
        url = f"http://127.0.0.1:{self.port}{SLOW_PATH}"
        self.memory.answer(url, error="no answer within 1 s")
        return url

    def still_stalling(self) -> bool:
        return True  # the in-memory stall is its answer: nothing holds the caller

    def huge(self) -> str:
        return self.serve(BIG_PATH, 200)

    def closed(self) -> str:
        return "http://127.0.0.1:1/"


class LoopbackTargets:
    def __init__(self, server: ProbeServer) -> None:
        self.server = server
        self.prober: HttpProber = UrlProber(loopback_http())
        self.port = int(server.base_url.rsplit(":", 1)[1])

    def serve(self, path: str, status: int) -> str:
        self.server.answers[path] = (status, b"{}")
        return self.server.base_url + path

    def stalled(self) -> str:
        return self.server.base_url + SLOW_PATH

    def still_stalling(self) -> bool:
        return self.server.stalls_ended == 0

    def huge(self) -> str:
        return self.server.base_url + BIG_PATH

    def closed(self) -> str:
        return "http://127.0.0.1:1/"


@pytest.fixture(params=["memory", "loopback"])
def targets(request: pytest.FixtureRequest) -> Iterator[ProbeTargets]:
    if request.param == "memory":
        yield MemoryTargets()
        return
    with ProbeServer() as server:
        yield LoopbackTargets(server)


def test_probe_reports_the_status_the_url_answered(targets: ProbeTargets) -> None:
    ok = targets.serve("/healthz", 200)
    broken = targets.serve("/ready", 503)

    assert targets.prober.probe(ok, 5).status == 200
    assert targets.prober.probe(broken, 5).status == 503


def test_a_filled_in_template_reaches_the_node(targets: ProbeTargets) -> None:
    targets.serve("/healthz/node-a", 204)
    template = TEMPLATE.replace("PORT", str(targets.port))

    answer = targets.prober.probe(fill_probe_template(template, "node-a", "127.0.0.1"), 5)

    assert answer.status == 204


def test_a_closed_port_gives_an_error_and_no_status(targets: ProbeTargets) -> None:
    answer = targets.prober.probe(targets.closed(), 5)

    assert answer.status is None
    assert answer.error == "connection refused"


def test_a_server_that_never_answers_gives_an_error_within_the_timeout(
    targets: ProbeTargets,
) -> None:
    answer = targets.prober.probe(targets.stalled(), 1)

    # The deadline's reason (not a socket timeout's), given while the server still holds the
    # request (its stall lasts 30 s): the probe left at its deadline, not when the server let go.
    assert answer.status is None and answer.error == "no answer within 1 s"
    assert targets.still_stalling()


def test_a_huge_answer_is_not_read_whole(targets: ProbeTargets) -> None:
    assert targets.prober.probe(targets.huge(), 10).status == 200
