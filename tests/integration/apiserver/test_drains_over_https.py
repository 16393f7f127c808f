"""Drains through the agent's client: bounded failures that name blockers, and one drain per node
even when the agent's connection drops and it asks again."""

from __future__ import annotations

import socket
import ssl
import threading

import pytest

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.domain.cluster.objects import EventSubject, OwnerReference
from brupop.ports.errors import DrainFailedError
from brupop.services.apiserver.drain.drainer import DrainTimings
from brupop.services.apiserver.drain.forced_removal import FORCED_REASON
from tests.integration.apiserver.conftest import (
    FAST_DRAINS,
    NS,
    Rig,
    RigFactory,
    agent_pod,
    start_rig,
)
from tests.support.polling import wait_until
from tests.support.tls import TestCertificates

STATEFUL_SET = (OwnerReference(kind="StatefulSet", name="db", controller=True),)


def test_a_budget_that_never_allows_the_eviction_fails_the_drain_naming_the_blocker(
    rig: Rig,
) -> None:
    rig.cluster.add_pod("default", "db-0", "n1", labels={"app": "db"}, owners=STATEFUL_SET)
    rig.cluster.add_disruption_budget("default", "db-budget", {"app": "db"}, min_available=1)

    with pytest.raises(DrainFailedError) as failure:
        rig.client("n1").cordon_and_drain()

    assert "gave up after 1s" in str(failure.value)  # the drain's timeout, not the client's
    assert failure.value.blockers == ("default/db-0",)
    assert "PodDisruptionBudget default/db-budget" in str(failure.value)
    assert any(pod.name == "db-0" for pod in rig.cluster.pods.list_on_node("n1"))


def test_the_apiserver_drains_by_the_default_policy_of_its_namespace(rig: Rig) -> None:
    rig.cluster.add_pod("default", "web-0", "n1")
    rig.cluster.add_pod("default", "db-0", "n1", labels={"app": "db"}, owners=STATEFUL_SET)
    rig.cluster.add_disruption_budget("default", "db-budget", {"app": "db"}, min_available=1)
    drain = {"gracePeriodSeconds": 4, "onTimeout": "force", "forceNamespaces": ["default"]}
    rig.cluster.policies.apply({"metadata": {"name": "default"}, "spec": {"drain": drain}})

    rig.client("n1").cordon_and_drain()  # the budget holds db-0 until the timeout forces it

    assert {pod.name for pod in rig.cluster.pods.list_on_node("n1")} == {agent_pod("n1")}
    assert rig.cluster.pods.eviction_grace_periods["default/web-0"] == 4
    (forced,) = rig.cluster.events.recorded
    assert (forced.subject, forced.shadow_name, forced.reason) == (
        EventSubject.NODE,
        "n1",
        FORCED_REASON,
    )
    assert "default/db-0" in forced.message


def test_a_budget_that_allows_the_eviction_after_a_while_ends_in_success(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(drain=DrainTimings(timeout_seconds=10, retry_interval_seconds=0.05))
    rig.cluster.add_pod("default", "db-0", "n1", labels={"app": "db"}, owners=STATEFUL_SET)
    rig.cluster.add_disruption_budget("default", "db-budget", {"app": "db"}, min_available=1)
    drain = threading.Thread(target=rig.client("n1").cordon_and_drain)
    drain.start()
    wait_until(lambda: rig.cluster.pods.evictions_refused >= 3, seconds=5)

    rig.cluster.add_pod("default", "db-1", "n2", labels={"app": "db"}, owners=STATEFUL_SET)
    drain.join(10)

    assert not drain.is_alive()
    assert {pod.name for pod in rig.cluster.pods.list_on_node("n1")} == {agent_pod("n1")}


def test_a_dropped_connection_mid_drain_then_a_new_request_makes_one_drain(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(drain=DrainTimings(timeout_seconds=10, retry_interval_seconds=0.05))
    rig.cluster.add_pod("default", "db-0", "n1", labels={"app": "db"}, owners=STATEFUL_SET)
    rig.cluster.add_disruption_budget("default", "db-budget", {"app": "db"}, min_available=1)
    drains = rig.drains

    send_drain_request_and_hang_up(rig)
    wait_until(lambda: drains.in_progress() == 1, seconds=5)
    again = threading.Thread(target=rig.client("n1").cordon_and_drain)
    again.start()
    wait_until(lambda: rig.cluster.pods.evictions_refused >= 3, seconds=5)
    rig.cluster.remove_disruption_budget("default", "db-budget")
    again.join(10)

    assert not again.is_alive()
    assert drains.started == 1
    assert drains.in_progress() == 0
    assert {pod.name for pod in rig.cluster.pods.list_on_node("n1")} == {agent_pod("n1")}


def test_after_an_apiserver_restart_brupop_still_knows_it_cordoned_the_node(
    make_rig: RigFactory, certs: TestCertificates
) -> None:
    before = make_rig()
    before.client("n1").cordon_and_drain()
    before.stop()

    after = start_rig(certs, before.cluster, ApiserverOptions(namespace=NS, drain=FAST_DRAINS))
    try:
        after.client("n1").cordon_and_drain()
        after.client("n1").uncordon()
    finally:
        after.stop()

    assert not before.cluster.nodes.get("n1").unschedulable


def send_drain_request_and_hang_up(rig: Rig) -> None:
    """What an agent whose connection breaks does: ask for the drain, then vanish."""
    token = rig.cluster.issue_token(NS, agent_pod("n1"))
    request = (
        "POST /bottlerocket-node-resource/cordon-and-drain HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{rig.server.port}\r\n"
        f"BrupopNodeName: n1\r\nBrupopNodeUid: uid-n1\r\nBrupopK8sAuthToken: {token}\r\n"
        "Content-Length: 0\r\n\r\n"
    )
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))
    with (
        socket.create_connection(("127.0.0.1", rig.server.port)) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        tls.sendall(request.encode())
        wait_until(lambda: rig.drains.in_progress() == 1, seconds=5)
