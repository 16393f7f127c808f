"""Stopping the apiserver, or an agent hanging up, while agents wait on long-polls or drains is
an expected event: it logs no traceback, no warning and no error, whatever the order."""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import ssl
import threading
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

import pytest
import structlog

from brupop.domain.cluster.objects import OwnerReference
from brupop.domain.host.agent_shadow import AgentShadow
from brupop.ports.errors import UnavailableError
from brupop.services.apiserver.drain.drainer import DrainTimings
from tests.integration.apiserver.conftest import (
    NS,
    Rig,
    RigFactory,
    add_agent_nodes,
    agent_pod,
    open_connections,
    start_brupop_apiserver,
)
from tests.support.polling import first_answer, wait_until
from tests.support.tls import TestCertificates

RESOURCE = "/bottlerocket-node-resource"
DRAIN = f"{RESOURCE}/cordon-and-drain"
STATEFUL_SET = (OwnerReference(kind="StatefulSet", name="db", controller=True),)
ALARMS = ("Traceback", "Exception in ASGI application", "CancelledError")


@dataclass
class Output:
    """Everything the server wrote: stdlib records (uvicorn, asyncio), structlog events, fds."""

    caplog: pytest.LogCaptureFixture
    capfd: pytest.CaptureFixture[str]
    events: list[MutableMapping[str, Any]]

    def alarms(self) -> list[str]:
        found = [
            f"{record.name} {record.levelname}: {record.getMessage()}"
            for record in self.caplog.records
            if record.levelno >= logging.WARNING
        ]
        found += [
            f"{event.get('log_level')}: {event.get('event')}"
            for event in self.events
            if event.get("log_level") in ("warning", "error", "critical")
        ]
        out, err = self.capfd.readouterr()
        text = self.caplog.text + out + err
        found += [f"output shows {alarm!r}" for alarm in ALARMS if alarm in text]
        return found


@pytest.fixture
def output(caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> Iterator[Output]:
    caplog.set_level(logging.INFO)
    with structlog.testing.capture_logs() as events:
        yield Output(caplog, capfd, events)


def send_raw(rig: Rig, node: str, method: str, target: str) -> ssl.SSLSocket:
    """An agent's request on a socket of its own, which the test can drop at any moment."""
    token = rig.cluster.issue_token(NS, agent_pod(node))
    request = (
        f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{rig.server.port}\r\n"
        f"BrupopNodeName: {node}\r\nBrupopNodeUid: uid-{node}\r\nBrupopK8sAuthToken: {token}\r\n"
        "Content-Length: 0\r\n\r\n"
    )
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))
    raw = socket.create_connection(("127.0.0.1", rig.server.port))
    tls = context.wrap_socket(raw, server_hostname="localhost")
    tls.sendall(request.encode())
    return tls


def long_poll_target(shadow: AgentShadow) -> str:
    return f"{RESOURCE}?resourceVersion={shadow.resource_version}&timeoutSeconds=30"


def answered(rig: Rig, route: str, method: str, status: str) -> float:
    """How many requests to `route` ended with `status` (from the server's own metrics)."""
    labels = {"route": route, "method": method, "status": status}
    value = rig.metrics.registry.get_sample_value("brupop_apiserver_requests_total", labels)
    return value or 0.0


@contextlib.contextmanager
def drains_blocked_on(rig: Rig, node: str) -> Iterator[None]:
    """A budget keeps `node`'s pod from leaving while inside; the drain then ends (no leak)."""
    rig.cluster.add_pod("default", "db-0", node, labels={"app": "db"}, owners=STATEFUL_SET)
    rig.cluster.add_disruption_budget("default", "db-budget", {"app": "db"}, min_available=1)
    try:
        yield
    finally:
        rig.cluster.remove_disruption_budget("default", "db-budget")
        wait_until(lambda: rig.drains.in_progress() == 0, seconds=10)


def test_stopping_the_apiserver_during_long_polls_logs_no_traceback(
    make_rig: RigFactory, output: Output
) -> None:
    rig = make_rig(drain=DrainTimings(timeout_seconds=30, retry_interval_seconds=0.05))
    agents = tuple(f"n{index}" for index in range(1, 9))
    add_agent_nodes(rig.cluster, agents[2:])
    clients = {node: rig.client(node) for node in agents}
    shadows = {node: client.create() for node, client in clients.items()}
    # agents[4] only created its shadow: its client holds an idle keep-alive connection.
    pollers, (hung_up, stalled, draining) = agents[:4], agents[5:]
    answers: dict[str, object] = {}

    def wait_on(node: str, call: Callable[[], object]) -> threading.Thread:
        def run() -> None:
            try:
                answers[node] = call()
            except Exception as error:
                answers[node] = error

        thread = threading.Thread(target=run, name=f"agent-{node}")
        thread.start()
        return thread

    def poll(node: str) -> Callable[[], object]:
        return lambda: clients[node].wait_for_change(shadows[node].resource_version, 30)

    with drains_blocked_on(rig, draining):
        threads = [wait_on(node, poll(node)) for node in pollers]
        threads.append(wait_on(draining, clients[draining].cordon_and_drain))
        wait_until(lambda: rig.feed.waiting() == len(pollers), seconds=10)
        dropped = send_raw(rig, hung_up, "GET", long_poll_target(shadows[hung_up]))
        wait_until(lambda: rig.feed.waiting() == len(pollers) + 1, seconds=10)
        dropped.close()
        never_reads = send_raw(rig, stalled, "GET", long_poll_target(shadows[stalled]))
        wait_until(lambda: rig.drains.in_progress() == 1, seconds=10)

        rig.server.stop()
        never_reads.close()
        for thread in threads:
            thread.join(10)

    assert not rig.server.thread.is_alive()
    assert {node: answers.get(node) for node in pollers} == {
        node: shadows[node] for node in pollers
    }
    assert isinstance(answers.get(draining), UnavailableError)
    assert output.alarms() == []


@pytest.mark.parametrize("route", [RESOURCE, DRAIN])
def test_an_agent_hanging_up_mid_wait_ends_the_wait_without_a_log_line(
    make_rig: RigFactory, output: Output, route: str
) -> None:
    rig = make_rig(drain=DrainTimings(timeout_seconds=30, retry_interval_seconds=0.05))
    shadow = rig.client("n1").create()
    method, target = ("GET", long_poll_target(shadow)) if route == RESOURCE else ("POST", DRAIN)
    with drains_blocked_on(rig, "n1"):
        waiting = send_raw(rig, "n1", method, target)
        wait_until(lambda: rig.feed.waiting() + rig.drains.in_progress() == 1, seconds=10)

        waiting.close()
        wait_until(lambda: answered(rig, route, method, "499") == 1, seconds=10)

        assert rig.feed.waiting() == 0
        assert rig.client("n2").create().name == "brs-n2"  # still serving
    assert output.alarms() == []


def test_a_connection_whose_tls_handshake_ends_during_the_stop_is_hung_up_quietly(
    rig: Rig, output: Output
) -> None:
    raw = socket.create_connection(("127.0.0.1", rig.server.port))
    # The server accepts it; no TLS yet, so it is no HTTP connection yet.
    wait_until(lambda: open_connections(rig, "agents") == 1, "the connection accepted")
    stopping = threading.Thread(target=rig.server.stop)
    stopping.start()
    wait_until(
        lambda: any(r.getMessage() == "Shutting down" for r in output.caplog.records), seconds=10
    )

    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))
    # Whether the handshake completes or the server hangs up first is the server's business;
    # what matters here is that the server stops without an alarming line.
    with contextlib.suppress(OSError), context.wrap_socket(raw, server_hostname="localhost"):
        stopping.join(10)
    stopping.join(10)

    assert not rig.server.thread.is_alive()
    assert output.alarms() == []


def test_sigterm_with_idle_agent_connections_stops_brupop_apiserver_without_an_error_line(
    certs: TestCertificates,
) -> None:
    process, port = start_brupop_apiserver(certs)
    context = ssl.create_default_context(cafile=str(certs.ca_path))
    idle: list[ssl.SSLSocket] = []
    try:
        for _ in range(3):
            idle.append(first_answer(lambda: keep_alive_after_ping(context, port), "GET /ping"))
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        for connection in idle:
            connection.close()

    lines = err.decode().splitlines()
    assert process.returncode == 0, lines
    assert [line for line in lines if '"level": "info"' not in line] == []


def keep_alive_after_ping(context: ssl.SSLContext, port: int) -> ssl.SSLSocket:
    """A connection that asked /ping, read the answer, and stays open without reading more."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    tls = context.wrap_socket(raw, server_hostname="localhost")
    tls.sendall(b"GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n")
    reply = b""
    while not reply.endswith(b"pong"):
        chunk = tls.recv(4096)
        if not chunk:
            raise ConnectionError("closed before answering")
        reply += chunk
    return tls
