"""Canary selection (by selector or by count in the controller's order) and their soak."""

from __future__ import annotations

from datetime import timedelta

from brupop.domain.policy.update_policy import CanarySpec
from brupop.domain.rollout.ordering import update_order
from brupop.domain.safety.canary import (
    awaited_canaries,
    choose_canaries,
    may_start,
    soak_progress,
)
from brupop.domain.states import UpdateState
from tests.unit.domain.controller_shadows import NEW, NOW, OLD, ago, shadow

LABELS = {
    "a": {"role": "canary"},
    "b": {"role": "web"},
    "c": {"role": "canary", "zone": "z1"},
    "d": {},
}


def test_count_picks_the_first_nodes_in_the_controllers_order() -> None:
    fleet = [shadow("d"), shadow("c", crashes=2), shadow("b"), shadow("a")]
    ordered = update_order(fleet, controller_node="a")

    chosen = choose_canaries(ordered, CanarySpec(count=2), LABELS)

    # fewest crashes first, the controller's own node last: b and d.
    assert chosen == frozenset({"b", "d"})


def test_selector_picks_the_nodes_whose_labels_match() -> None:
    fleet = [shadow(name) for name in ("a", "b", "c", "d", "unlabelled")]

    chosen = choose_canaries(fleet, CanarySpec(selector="role=canary,zone!=z2"), LABELS)

    assert chosen == frozenset({"a", "c"})


def test_others_wait_until_every_canary_is_idle_on_the_new_version() -> None:
    done = shadow("a", current=NEW)
    still_rebooting = shadow("c", spec=UpdateState.REBOOTED_INTO_UPDATE, state=UpdateState.IDLE)

    soak = soak_progress(
        [done, still_rebooting],
        target_version=NEW,
        finished_at={"a": ago(3600)},
        soak_seconds=60,
        now=NOW,
    )

    assert (soak.canaries, soak.updated, soak.done) == (2, 1, False)
    assert not may_start("b", {"a", "c"}, soak)
    assert may_start("c", {"a", "c"}, soak)
    assert soak.message(NOW) == "waiting for canaries: 1/2 updated"


def test_soak_ends_soak_seconds_after_the_last_canary_finished() -> None:
    canaries = [shadow("a", current=NEW), shadow("c", current=NEW)]
    finished = {"a": ago(500), "c": ago(100)}

    soaking = soak_progress(
        canaries, target_version=NEW, finished_at=finished, soak_seconds=300, now=NOW
    )
    soaked = soak_progress(
        canaries,
        target_version=NEW,
        finished_at=finished,
        soak_seconds=300,
        now=NOW + timedelta(seconds=200),
    )

    assert soaking.ends_at == ago(100) + timedelta(seconds=300)
    assert not soaking.done and soaking.message(NOW) == "canaries soaking: 200 s left"
    assert not may_start("b", {"a", "c"}, soaking)
    assert soaked.done and may_start("b", {"a", "c"}, soaked)


def test_a_canary_without_a_passed_gate_record_does_not_count_as_soaked() -> None:
    # Idle on the new version, but the controller never recorded its gate as passed.
    soak = soak_progress(
        [shadow("a", current=NEW)], target_version=NEW, finished_at={}, soak_seconds=0, now=NOW
    )

    assert not soak.done


def test_a_canary_idle_on_the_old_version_has_not_finished() -> None:
    soak = soak_progress(
        [shadow("a", current=OLD)],
        target_version=NEW,
        finished_at={"a": ago(9999)},
        soak_seconds=0,
        now=NOW,
    )

    assert soak.updated == 0 and not soak.done


def test_no_canaries_means_nothing_to_wait_for() -> None:
    soak = soak_progress([], target_version=NEW, finished_at={}, soak_seconds=600, now=NOW)

    assert soak.done and may_start("b", set(), soak)


def test_count_chooses_only_the_places_left_when_some_canaries_are_chosen() -> None:
    ordered = [shadow("b"), shadow("d"), shadow("e")]

    assert choose_canaries(ordered, CanarySpec(count=3), LABELS, chosen=2) == frozenset({"b"})
    assert choose_canaries(ordered, CanarySpec(count=2), LABELS, chosen=2) == frozenset()


def test_unreported_nodes_are_awaited_up_to_the_count_or_when_their_labels_match() -> None:
    unreported = ["a", "b", "d"]

    assert awaited_canaries(CanarySpec(count=2), 1, unreported, LABELS) == 1
    assert awaited_canaries(CanarySpec(count=5), 1, unreported, LABELS) == 3
    assert awaited_canaries(CanarySpec(count=2), 2, unreported, LABELS) == 0
    assert awaited_canaries(CanarySpec(selector="role=canary"), 0, unreported, LABELS) == 1


def test_the_soak_does_not_end_while_a_canary_is_awaited() -> None:
    soak = soak_progress(
        [shadow("a", current=NEW)],
        target_version=NEW,
        finished_at={"a": ago(3600)},
        soak_seconds=60,
        now=NOW,
        awaited=1,
        asked=2,
    )

    assert not soak.done and not soak.all_updated and soak.ends_at is None
    assert not may_start("b", {"a"}, soak)
    assert soak.message(NOW) == (
        "waiting for canaries: 1/1 updated, 1 more to choose when its node reports"
    )


def test_fewer_canaries_than_asked_soak_and_the_message_says_why() -> None:
    soak = soak_progress(
        [shadow("a", current=NEW)],
        target_version=NEW,
        finished_at={"a": ago(3600)},
        soak_seconds=60,
        now=NOW,
        asked=2,
    )

    assert soak.done
    assert soak.message(NOW) == "canaries soaked (1/1) (2 canaries asked, 1 node matches)"
