"""ShadowFeed over a real watch: a waiter wakes at once on change, else at its timeout."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.shadow import ShadowSpec
from brupop.domain.states import UpdateState
from brupop.services.apiserver.shadow_feed import FeedAnswer, ShadowFeed
from tests.support.polling import eventually

NS = "brupop-bottlerocket-aws"


@pytest.fixture
def cluster() -> InMemoryCluster:
    cluster = InMemoryCluster(NS)
    cluster.add_node("n1", uid="uid-n1")
    return cluster


@pytest.fixture
async def feed(cluster: InMemoryCluster) -> AsyncIterator[ShadowFeed]:
    feed = ShadowFeed(cluster.shadows, watch_seconds=0.2)
    feed.start()
    await eventually(lambda: feed.ready, "the feed's first list")
    yield feed
    feed.stop()


def move_on(cluster: InMemoryCluster) -> str | None:
    spec = ShadowSpec(state=UpdateState.STAGED_AND_PERFORMED_UPDATE, version="1.2.0")
    return cluster.shadows.replace_spec("brs-n1", spec, None).resource_version


# None: the long-poll's wait, whose caller's deadline is its only timer.
@pytest.mark.parametrize("timeout", [30.0, None], ids=["own_timeout", "callers_deadline"])
async def test_a_waiter_at_the_current_version_is_woken_by_the_next_change_and_leaves_no_waiter(
    cluster: InMemoryCluster, feed: ShadowFeed, timeout: float | None
) -> None:
    created = cluster.shadows.create("n1", "uid-n1")
    waiting = asyncio.create_task(feed.wait_for_change("brs-n1", created.resource_version, timeout))
    await eventually(lambda: feed.waiting() == 1, "the request waiting on the feed")
    assert not waiting.done()

    new_version = await asyncio.to_thread(move_on, cluster)
    answer = await asyncio.wait_for(waiting, 5)

    assert answer is not None and answer.shadow is not None
    assert answer.shadow.resource_version == new_version
    assert answer.shadow.spec.state is UpdateState.STAGED_AND_PERFORMED_UPDATE
    assert feed.waiting() == 0


async def test_an_older_version_is_answered_at_once(
    cluster: InMemoryCluster, feed: ShadowFeed
) -> None:
    created = cluster.shadows.create("n1", "uid-n1")
    newest = move_on(cluster)
    await eventually(
        lambda: (seen := feed.latest("brs-n1")) is not None and seen.resource_version == newest,
        "the feed seeing the change",
    )

    answer = await asyncio.wait_for(
        feed.wait_for_change("brs-n1", created.resource_version, 30), 10
    )

    assert answer is not None and answer.shadow is not None
    assert answer.shadow.resource_version == newest


async def test_an_unchanged_shadow_is_answered_when_the_wait_ends(
    cluster: InMemoryCluster, feed: ShadowFeed
) -> None:
    created = cluster.shadows.create("n1", "uid-n1")
    await eventually(lambda: feed.latest("brs-n1") is not None, "the feed seeing the shadow")

    answer = await feed.wait_for_change("brs-n1", created.resource_version, 0.1)

    assert answer == FeedAnswer(created)


async def test_a_missing_shadow_without_a_version_waits_for_its_creation(
    cluster: InMemoryCluster, feed: ShadowFeed
) -> None:
    waiting = asyncio.create_task(feed.wait_for_change("brs-n1", None, 30))
    await eventually(lambda: feed.waiting() == 1, "the request waiting on the feed")
    assert not waiting.done()

    await asyncio.to_thread(cluster.shadows.create, "n1", "uid-n1")
    answer = await asyncio.wait_for(waiting, 5)

    assert answer is not None and answer.shadow is not None
    assert answer.shadow.node_uid == "uid-n1"


async def test_a_missing_shadow_is_reported_missing_at_the_timeout(feed: ShadowFeed) -> None:
    assert await feed.wait_for_change("brs-n1", None, 0.05) == FeedAnswer(None)


async def test_a_version_the_feed_has_not_seen_is_left_to_the_caller_at_the_timeout(
    cluster: InMemoryCluster, feed: ShadowFeed
) -> None:
    cluster.shadows.create("n1", "uid-n1")
    await eventually(lambda: feed.latest("brs-n1") is not None, "the feed seeing the shadow")

    assert await feed.wait_for_change("brs-n1", "999999", 0.05) is None


async def test_a_deleted_shadow_wakes_its_waiter_with_none(
    cluster: InMemoryCluster, feed: ShadowFeed
) -> None:
    created = cluster.shadows.create("n1", "uid-n1")
    waiting = asyncio.create_task(feed.wait_for_change("brs-n1", created.resource_version, 30))
    await eventually(lambda: feed.waiting() == 1, "the request waiting on the feed")

    await asyncio.to_thread(cluster.shadows.delete, "brs-n1")

    assert await asyncio.wait_for(waiting, 5) == FeedAnswer(None)
