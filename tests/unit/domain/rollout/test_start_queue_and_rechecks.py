"""The rollout book's two orderings: the ready shadows in start order, and the moments at
which decisions are due again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from brupop.domain.rollout.recheck_schedule import SLACK, RecheckSchedule
from brupop.domain.rollout.start_queue import ReadyKey, StartQueue

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_start_queue_keeps_the_controllers_node_last_then_fewest_crashes_then_name() -> None:
    queue = StartQueue()
    for key in (
        ReadyKey(True, 0, "controller-node"),
        ReadyKey(False, 2, "a-crashed"),
        ReadyKey(False, 0, "b"),
        ReadyKey(False, 0, "a"),
    ):
        queue.put(key)

    assert queue.names() == ["a", "b", "a-crashed", "controller-node"]
    assert queue.names(2) == ["a", "b"]
    assert queue.among({"controller-node", "b", "not-ready"}) == ["b", "controller-node"]


def test_putting_a_ready_shadow_again_moves_it_and_removing_it_forgets_it() -> None:
    queue = StartQueue()
    queue.put(ReadyKey(False, 0, "a"))
    queue.put(ReadyKey(False, 0, "b"))

    queue.put(ReadyKey(False, 3, "a"))  # it crashed meanwhile
    queue.remove("b")
    queue.remove("never-there")

    assert queue.names() == ["a"]
    assert len(queue) == 1
    assert queue.key("a") == ReadyKey(False, 3, "a")
    assert "b" not in queue


def test_a_recheck_is_due_once_at_its_latest_moment_and_a_cancelled_one_never() -> None:
    rechecks = RecheckSchedule()
    rechecks.set("a", T0 + timedelta(seconds=10))
    rechecks.set("a", T0 + timedelta(seconds=30))  # decided again: the later moment counts
    rechecks.set("b", T0 + timedelta(seconds=20))
    rechecks.set("c", T0 + timedelta(seconds=5))
    rechecks.cancel("c")

    assert rechecks.due(T0 + timedelta(seconds=25)) == ["b"]
    assert rechecks.at("a") == T0 + timedelta(seconds=30)
    assert rechecks.due(T0 + timedelta(seconds=30)) == ["a"]
    assert rechecks.due(T0 + timedelta(days=1)) == []


def test_a_recheck_moved_many_times_keeps_the_heap_near_the_number_of_shadows() -> None:
    rechecks = RecheckSchedule()
    for step in range(10 * SLACK):
        rechecks.set("a", T0 + timedelta(seconds=step))

    assert len(rechecks._heap) <= 2 + SLACK + 1
    assert rechecks.due(T0 + timedelta(days=1)) == ["a"]
