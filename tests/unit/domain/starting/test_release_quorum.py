"""The release-age quorum: a version's age starts only when enough nodes report it, a time
recorded for a version fewer nodes report is forgotten, and the gate says who is missing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from brupop.domain.policy.scheduling_policy import VersionSpec
from brupop.domain.policy.update_policy_status import VersionSeen
from brupop.domain.reason import Reason
from brupop.domain.starting.release_quorum import VersionQuorum, quorum_needed
from brupop.domain.starting.version_gate import version_hold
from brupop.domain.starting.versions_first_seen import first_seen_times, note_at_quorum

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
AGE = VersionSpec(min_release_age_hours=48)


def _at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


@pytest.mark.parametrize(
    ("fleet", "needed"),
    [(1, 1), (2, 2), (3, 2), (20, 2), (21, 3), (100, 10), (10_000, 1_000)],
)
def test_the_default_quorum_is_a_tenth_of_the_fleet_at_least_two_at_most_the_fleet(
    fleet: int, needed: int
) -> None:
    assert quorum_needed(fleet) == needed


def test_a_set_quorum_is_used_as_given_and_capped_at_the_fleet() -> None:
    assert quorum_needed(100, 5) == 5
    assert quorum_needed(3, 5) == 3
    assert quorum_needed(0) == 1


def test_a_version_one_node_reports_is_not_noted() -> None:
    quorum = VersionQuorum.of({"1.20.0": 9, "1.21.0": 1}, fleet=10)

    assert first_seen_times(note_at_quorum((), quorum, T0)) == {"1.20.0": T0}


def test_a_version_is_noted_when_the_quorum_reports_it_and_its_time_then_stays() -> None:
    one = note_at_quorum((), VersionQuorum.of({"1.21.0": 1}, fleet=10), T0)
    two = note_at_quorum(one, VersionQuorum.of({"1.21.0": 2}, fleet=10), _at(49))
    more = note_at_quorum(two, VersionQuorum.of({"1.21.0": 10}, fleet=10), _at(50))

    assert first_seen_times(two) == {"1.21.0": _at(49)}
    assert more is two


def test_a_recorded_time_of_a_version_fewer_nodes_report_than_the_quorum_is_forgotten() -> None:
    planted = (VersionSeen(version="1.21.0", at=T0), VersionSeen(version="1.20.0", at=T0))
    quorum = VersionQuorum.of({"1.20.0": 9, "1.21.0": 1}, fleet=10)

    assert first_seen_times(note_at_quorum(planted, quorum, _at(1))) == {"1.20.0": T0}


def test_a_recorded_time_of_a_version_no_node_reports_is_forgotten() -> None:
    planted = (VersionSeen(version="1.21.0", at=T0),)
    quorum = VersionQuorum.of({"1.20.0": 10, "1.21.0": 0}, fleet=10)

    assert first_seen_times(note_at_quorum(planted, quorum, _at(1))) == {"1.20.0": _at(1)}


def test_a_view_where_no_node_reports_anything_keeps_every_recorded_time() -> None:
    seen = (VersionSeen(version="1.21.0", at=T0),)

    assert note_at_quorum(seen, VersionQuorum.of({}, fleet=10), _at(1)) is seen


def test_the_gate_holds_a_version_short_of_its_quorum_and_says_how_many_report_it() -> None:
    quorum = VersionQuorum.of({"1.20.0": 9, "1.21.0": 1}, fleet=10)

    hold = version_hold(AGE, {}, "1.21.0", _at(49), quorum)

    assert hold is not None
    assert hold.reason is Reason.RELEASE_TOO_NEW
    assert hold.detail == "1.21.0 offered by 1 of 2 nodes needed to start its release age"
    assert hold.until is None


def test_without_a_release_age_the_quorum_holds_nothing() -> None:
    quorum = VersionQuorum.of({"1.21.0": 1}, fleet=10)

    assert version_hold(VersionSpec(min_release_age_hours=0), {}, "1.21.0", T0, quorum) is None


def test_in_a_fleet_of_one_its_node_starts_the_release_age() -> None:
    quorum = VersionQuorum.of({"1.21.0": 1}, fleet=1)
    seen = note_at_quorum((), quorum, T0)

    hold = version_hold(AGE, first_seen_times(seen), "1.21.0", T0, quorum)

    assert hold is not None and hold.until == _at(48)
