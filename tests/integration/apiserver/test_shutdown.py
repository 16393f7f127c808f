"""Stopping the server answers the agents that are waiting instead of cutting them off."""

from __future__ import annotations

import threading

from brupop.domain import shadow as cluster
from brupop.domain.cluster.objects import OwnerReference
from brupop.domain.host.agent_shadow import AgentShadow
from brupop.ports.errors import UnavailableError
from brupop.services.apiserver.drain.drainer import DrainTimings
from tests.integration.apiserver.conftest import Rig, RigFactory
from tests.support.polling import wait_until


def test_a_pending_long_poll_is_answered_when_the_server_stops(rig: Rig) -> None:
    agent = rig.client("n1")
    created = agent.create()
    answers: list[AgentShadow | None] = []
    poll = threading.Thread(
        target=lambda: answers.append(agent.wait_for_change(created.resource_version, 30))
    )
    poll.start()
    wait_until(lambda: rig.feed.waiting() > 0, "the long poll held", seconds=30)
    assert poll.is_alive() and rig.feed.waiting() == 1

    rig.server.stop()
    poll.join(15)

    assert answers == [created]


def cluster_reads_once_fed(rig: Rig, shadow: AgentShadow) -> list[str]:
    """The names of the shadows read from the cluster from now on, once the feed holds
    `shadow`."""
    wait_until(lambda: rig.feed.latest(shadow.name) is not None, "the feed", seconds=30)
    reads: list[str] = []
    read = rig.cluster.shadows.get

    def counted_read(name: str) -> cluster.Shadow:
        reads.append(name)
        return read(name)

    rig.cluster.shadows.get = counted_read  # type: ignore[method-assign]
    return reads


def test_a_long_poll_cut_short_is_answered_from_the_feed_without_a_cluster_read(rig: Rig) -> None:
    agent = rig.client("n1")
    created = agent.create()
    reads = cluster_reads_once_fed(rig, created)
    assert rig.begin_shutdown is not None
    rig.begin_shutdown()  # every wait from now on is cut short at once

    answer = agent.wait_for_change(created.resource_version, 30)

    assert answer == created
    assert reads == []


def test_a_read_without_a_wait_is_read_from_the_cluster_even_when_the_feed_holds_it(
    rig: Rig,
) -> None:
    agent = rig.client("n1")
    created = agent.create()
    reads = cluster_reads_once_fed(rig, created)

    answer = agent.get()  # the agent's fresh read before it acts

    assert answer == created
    assert reads == ["brs-n1"]


def test_a_pending_drain_wait_is_told_to_ask_again_when_the_server_stops(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(drain=DrainTimings(timeout_seconds=3, retry_interval_seconds=0.05))
    owner = (OwnerReference(kind="StatefulSet", name="db", controller=True),)
    rig.cluster.add_pod("default", "db-0", "n1", labels={"app": "db"}, owners=owner)
    rig.cluster.add_disruption_budget("default", "db-budget", {"app": "db"}, min_available=1)
    agent = rig.client("n1")
    outcome: list[Exception] = []

    def drain() -> None:
        try:
            agent.cordon_and_drain()
        except Exception as error:
            outcome.append(error)

    waiting = threading.Thread(target=drain)
    waiting.start()
    # Stop only once the drain is under way on the server (its first eviction was refused),
    # however slow the machine is to get the request there.
    wait_until(lambda: rig.cluster.pods.evictions_refused > 0, "a refused eviction", seconds=30)
    assert waiting.is_alive() and rig.cluster.pods.evictions_refused > 0

    rig.server.stop()
    waiting.join(15)

    assert len(outcome) == 1
    assert isinstance(outcome[0], UnavailableError)
    assert "ask again" in str(outcome[0])
