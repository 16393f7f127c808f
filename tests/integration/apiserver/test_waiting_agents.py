"""Many agents waiting at once: what a waiting long-poll costs the server, and that the server
still answers each when its shadow changes."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import socket
import ssl
import tracemalloc
from collections.abc import Iterator

import pytest

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.apiserver_http.serving.server import ServerLimits
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.shadow import Shadow, ShadowSpec, shadow_name
from brupop.domain.states import UpdateState
from tests.integration.apiserver.conftest import NS, Rig, add_agent_nodes, agent_pod, start_rig
from tests.support.polling import wait_until
from tests.support.tls import TestCertificates

AGENTS = 60
# Python objects a waiting long-poll holds on the server (TLS's own state, in OpenSSL, is apart):
# about 50 KiB before the wait path was cut (a 16 KiB read buffer per connection, four tasks and
# three events per wait), about 30 KiB after.
PYTHON_KIB_PER_WAIT = 40


@pytest.fixture
def fleet_rig(certs: TestCertificates) -> Iterator[Rig]:
    cluster = InMemoryCluster(NS)
    nodes = tuple(f"node-{index}" for index in range(AGENTS))
    add_agent_nodes(cluster, nodes)
    for node in nodes:
        cluster.shadows.create(node, f"uid-{node}")
    options = ApiserverOptions(namespace=NS, feed_watch_seconds=0.5)
    rig = start_rig(certs, cluster, options, ServerLimits())
    wait_until(lambda: rig.feed.ready, seconds=10)
    try:
        yield rig
    finally:
        rig.stop()


def long_poll(rig: Rig, node: str, shadow: Shadow) -> ssl.SSLSocket:
    """An agent's long-poll at its shadow's version, on a keep-alive connection of its own."""
    token = rig.cluster.issue_token(NS, agent_pod(node))
    request = (
        f"GET /bottlerocket-node-resource?resourceVersion={shadow.resource_version}"
        f"&timeoutSeconds=30 HTTP/1.1\r\nHost: 127.0.0.1:{rig.server.port}\r\n"
        f"BrupopNodeName: {node}\r\nBrupopNodeUid: uid-{node}\r\n"
        f"BrupopK8sAuthToken: {token}\r\n\r\n"
    )
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))
    raw = socket.create_connection(("127.0.0.1", rig.server.port), timeout=10)
    connection = context.wrap_socket(raw, server_hostname="localhost")
    connection.sendall(request.encode())
    return connection


def answered_version(connection: ssl.SSLSocket) -> str:
    """The resourceVersion of the shadow the long-poll was answered with."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += connection.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    )
    while len(body) < length:
        body += connection.recv(65536)
    version: str = json.loads(body)["metadata"]["resourceVersion"]
    return version


def _after_a_loop_step(rig: Rig) -> None:
    """Returns once the server's event loop has run a step of ours: the step that registered the
    last waiter has ended, so what each wait holds (its time-out too) is allocated by then."""
    loop = rig.server.server.loop  # type: ignore[attr-defined]
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result(timeout=30)


def test_a_waiting_long_poll_holds_well_under_40_kib_of_python_objects(fleet_rig: Rig) -> None:
    shadows = {node: fleet_rig.cluster.shadows.get(shadow_name(node)) for node in _nodes()}
    with contextlib.ExitStack() as held:
        # One wait first: the modules and caches the first request loads are not per wait.
        first = held.enter_context(long_poll(fleet_rig, "node-0", shadows["node-0"]))
        wait_until(lambda: fleet_rig.feed.waiting() == 1, seconds=10)
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for node in _nodes()[1:]:
                held.enter_context(long_poll(fleet_rig, node, shadows[node]))
            wait_until(lambda: fleet_rig.feed.waiting() == AGENTS, seconds=30)
            _after_a_loop_step(fleet_rig)
            gc.collect()
            held_bytes = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert first.fileno() >= 0

    per_wait_kib = held_bytes / 1024 / (AGENTS - 1)
    assert per_wait_kib < PYTHON_KIB_PER_WAIT, f"{per_wait_kib:.1f} KiB per waiting long-poll"


def test_every_waiting_agent_is_answered_when_every_shadow_changes(fleet_rig: Rig) -> None:
    shadows = {node: fleet_rig.cluster.shadows.get(shadow_name(node)) for node in _nodes()}
    with contextlib.ExitStack() as held:
        waits = {
            node: held.enter_context(long_poll(fleet_rig, node, shadows[node])) for node in _nodes()
        }
        wait_until(lambda: fleet_rig.feed.waiting() == AGENTS, seconds=30)

        spec = ShadowSpec(state=UpdateState.STAGED_AND_PERFORMED_UPDATE, version="1.1.0")
        written = {
            node: fleet_rig.cluster.shadows.replace_spec(shadow_name(node), spec, None)
            for node in _nodes()
        }

        answered = {node: answered_version(connection) for node, connection in waits.items()}
    assert answered == {node: shadow.resource_version for node, shadow in written.items()}
    assert fleet_rig.feed.waiting() == 0


def _nodes() -> list[str]:
    return [f"node-{index}" for index in range(AGENTS)]
