"""One suite per agent port, two implementations: every test here runs against the fakes the
agent's unit tests use and against the real HTTPS client talking to the real apiserver app on
loopback (over the in-memory cluster), so the fakes cannot promise what the client does not do.

A side offers the agent's ports (`side.store`, `side.node`) plus what the rest of the cluster
would do around them (the controller moving the spec, an administrator cordoning, workloads on
the node), in domain terms, and the time the store's long-poll is measured in.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

import pytest

from brupop.adapters.apiserver_client import ApiserverClient
from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import LB_EXCLUSION_LABEL, LB_EXCLUSION_VALUE, OwnerReference
from brupop.domain.shadow import ShadowSpec, shadow_name
from brupop.domain.states import UpdateState
from brupop.ports.agent.node_operations import NodeOperations
from brupop.ports.agent.shadow_store import ShadowStore
from tests.fakes.clock import FakeClock
from tests.fakes.node_operations import FakeNodeOperations
from tests.fakes.shadow_store import InMemoryShadowStore
from tests.integration.apiserver.conftest import (
    FAST_DRAINS,
    NS,
    Rig,
    add_agent_nodes,
    start_rig,
)
from tests.support.polling import wait_until
from tests.support.tls import TestCertificates, make_certificates

NODE = "n1"
REPLICA_SET = (OwnerReference(kind="ReplicaSet", name="web-1", controller=True),)
STATEFUL_SET = (OwnerReference(kind="StatefulSet", name="db", controller=True),)


class AgentSide(Protocol):
    """The agent's ports of one node, and the cluster around them."""

    name: str
    store: ShadowStore
    node: NodeOperations

    def now(self) -> float:
        """The monotonic time the store's long-poll takes (seconds)."""
        ...

    def set_spec(self, state: UpdateState, version: str | None) -> None:
        """The controller asks the node for `state` (the shadow must exist)."""
        ...

    def create_shadow(self) -> None:
        """The shadow appears (as when the agent's create lands from elsewhere)."""
        ...

    def during_next_wait(self, action: Callable[[], None]) -> None:
        """Run `action` once the next long-poll is waiting."""
        ...

    def cordon_as_administrator(self) -> None: ...

    def exclude_as_administrator(self) -> None: ...

    def unschedulable(self) -> bool: ...

    def excluded_from_load_balancers(self) -> bool: ...

    def add_workload(self, name: str, *, protected: bool = False) -> None:
        """A pod on the node; a protected one is held there by a disruption budget."""
        ...

    def workloads(self) -> set[str]:
        """The workload pods (`namespace/name`) still on the node."""
        ...


class FakeSide:
    """The fakes, as the agent's unit tests build them."""

    name = "fake"

    def __init__(self) -> None:
        self.clock = FakeClock()
        self.fake_store = InMemoryShadowStore(
            NODE, namespace=NS, node_uid=f"uid-{NODE}", clock=self.clock
        )
        self.fake_node = FakeNodeOperations()
        self.store: ShadowStore = self.fake_store
        self.node: NodeOperations = self.fake_node

    def now(self) -> float:
        return self.clock.monotonic()

    def set_spec(self, state: UpdateState, version: str | None) -> None:
        self.fake_store.set_spec(state, version)

    def create_shadow(self) -> None:
        self.fake_store.put()

    def during_next_wait(self, action: Callable[[], None]) -> None:
        def once(store: InMemoryShadowStore) -> None:
            store.on_wait = None
            action()

        self.fake_store.on_wait = once

    def cordon_as_administrator(self) -> None:
        self.fake_node.cordon_as_administrator()

    def exclude_as_administrator(self) -> None:
        self.fake_node.exclude_as_administrator()

    def unschedulable(self) -> bool:
        return self.fake_node.cordoned

    def excluded_from_load_balancers(self) -> bool:
        return self.fake_node.excluded_from_load_balancers

    def add_workload(self, name: str, *, protected: bool = False) -> None:
        self.fake_node.add_workload(f"default/{name}", protected=protected)

    def workloads(self) -> set[str]:
        return set(self.fake_node.workloads)


class ApiserverSide:
    """The agent's HTTPS client, the real apiserver app, and the in-memory cluster behind it."""

    name = "apiserver"

    def __init__(self, rig: Rig) -> None:
        self.rig = rig
        self.cluster = rig.cluster
        self.client: ApiserverClient = rig.client(NODE)
        self.store: ShadowStore = self.client
        self.node: NodeOperations = self.client
        self._actions: list[threading.Thread] = []

    def now(self) -> float:
        return time.monotonic()

    def set_spec(self, state: UpdateState, version: str | None) -> None:
        self.cluster.shadows.replace_spec(
            shadow_name(NODE), ShadowSpec(state=state, version=version), None
        )

    def create_shadow(self) -> None:
        self.cluster.shadows.create(NODE, f"uid-{NODE}")

    def during_next_wait(self, action: Callable[[], None]) -> None:
        feed = self.rig.feed

        def when_waiting() -> None:
            wait_until(lambda: feed.waiting() > 0, "the agent's long poll", interval=0.005)
            action()

        thread = threading.Thread(target=when_waiting, daemon=True)
        thread.start()
        self._actions.append(thread)

    def cordon_as_administrator(self) -> None:
        self.cluster.nodes.set_unschedulable(NODE, True)

    def exclude_as_administrator(self) -> None:
        self.cluster.nodes.set_labels(NODE, {LB_EXCLUSION_LABEL: LB_EXCLUSION_VALUE})

    def unschedulable(self) -> bool:
        return self.cluster.nodes.get(NODE).unschedulable

    def excluded_from_load_balancers(self) -> bool:
        return LB_EXCLUSION_LABEL in self.cluster.nodes.get(NODE).labels

    def add_workload(self, name: str, *, protected: bool = False) -> None:
        if not protected:
            self.cluster.add_pod("default", name, NODE, labels={"app": name}, owners=REPLICA_SET)
            return
        self.cluster.add_pod("default", name, NODE, labels={"app": name}, owners=STATEFUL_SET)
        self.cluster.add_disruption_budget(
            "default", f"{name}-budget", {"app": name}, min_available=1
        )

    def workloads(self) -> set[str]:
        return {
            f"{pod.namespace}/{pod.name}"
            for pod in self.cluster.pods.list_on_node(NODE)
            if pod.namespace == "default"
        }

    def stop(self) -> None:
        for thread in self._actions:
            thread.join(10)
        self.rig.stop()


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> TestCertificates:
    return make_certificates(tmp_path_factory.mktemp("agent-tls"))


@pytest.fixture(params=["fake", "apiserver"])
def side(request: pytest.FixtureRequest, certs: TestCertificates) -> Iterator[AgentSide]:
    if request.param == "fake":
        yield FakeSide()
        return
    cluster = InMemoryCluster(NS)
    add_agent_nodes(cluster)
    options = ApiserverOptions(namespace=NS, drain=FAST_DRAINS, feed_watch_seconds=0.5)
    real = ApiserverSide(start_rig(certs, cluster, options))
    try:
        yield real
    finally:
        real.stop()
