"""How long a following informer holds each watch: minutes, and one watch per resync."""

from __future__ import annotations

from brupop.services.runtime.informer import Following


def test_a_watch_lasts_one_to_two_watch_periods_when_nothing_resyncs() -> None:
    following = Following(watch_seconds=300.0)

    periods = [following.watch_period(since_list=0.0) for _ in range(200)]

    assert all(300.0 <= period <= 600.0 for period in periods)
    assert len(set(periods)) > 1  # spread, so that replicas do not reopen theirs together


def test_a_watch_ends_when_the_resync_is_due_so_one_watch_is_opened_per_resync() -> None:
    following = Following(watch_seconds=300.0, resync_seconds=600.0)

    assert following.watch_period(since_list=0.0) == 600.0
    assert following.watch_period(since_list=450.0) == 150.0
    assert not following.resync_due(since_list=599.0)
    assert following.resync_due(since_list=600.0)


def test_a_resync_far_off_leaves_each_watch_its_own_period() -> None:
    following = Following(watch_seconds=300.0, resync_seconds=3600.0)

    assert 300.0 <= following.watch_period(since_list=0.0) <= 600.0
    assert following.watch_period(since_list=3300.0) == 300.0
