"""First-seen times of the offered versions: noted once, never moved, bounded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from brupop.domain.policy.update_policy_status import (
    VERSION_MAX_LENGTH,
    VERSIONS_SEEN_MAX,
    VersionSeen,
)
from brupop.domain.starting.versions_first_seen import first_seen_times, merge_seen, note_offered

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def _seen(**times: float) -> tuple[VersionSeen, ...]:
    entries = [VersionSeen(version=v.replace("_", "."), at=_at(h)) for v, h in times.items()]
    return tuple(sorted(entries, key=lambda e: (e.at, e.version)))


def test_a_version_offered_for_the_first_time_is_noted_at_now() -> None:
    assert note_offered((), ["1.21.0"], T0) == (VersionSeen(version="1.21.0", at=T0),)


def test_a_recorded_time_never_moves_when_the_version_is_offered_again() -> None:
    seen = note_offered((), ["1.21.0"], T0)
    again = note_offered(seen, ["1.21.0"], _at(5))
    assert again is seen
    assert first_seen_times(again) == {"1.21.0": T0}


def test_a_version_no_longer_offered_keeps_its_time() -> None:
    seen = note_offered((), ["1.21.0"], T0)
    assert first_seen_times(note_offered(seen, ["1.22.0"], _at(1))) == {
        "1.21.0": T0,
        "1.22.0": _at(1),
    }


def test_the_first_seen_list_is_bounded_dropping_the_oldest() -> None:
    seen: tuple[VersionSeen, ...] = ()
    for minor in range(VERSIONS_SEEN_MAX + 5):
        seen = note_offered(seen, [f"1.{minor}.0"], _at(minor))
    assert len(seen) == VERSIONS_SEEN_MAX
    kept = first_seen_times(seen)
    assert "1.4.0" not in kept and "1.5.0" in kept
    assert kept[f"1.{VERSIONS_SEEN_MAX + 4}.0"] == _at(VERSIONS_SEEN_MAX + 4)


def test_a_full_list_drops_an_old_unoffered_version_before_an_older_offered_one() -> None:
    seen = _seen(**{"1_0_0": 0, "1_1_0": 1})
    bounded = note_offered(seen, ["1.0.0", "1.2.0"], _at(2), limit=2)
    assert first_seen_times(bounded) == {"1.0.0": _at(0), "1.2.0": _at(2)}


def test_merging_the_status_keeps_the_earlier_time_of_each_version() -> None:
    mine = _seen(**{"1_21_0": 3, "1_22_0": 4})
    shown = _seen(**{"1_21_0": 1, "1_20_0": 0})
    assert first_seen_times(merge_seen(mine, shown)) == {
        "1.20.0": _at(0),
        "1.21.0": _at(1),
        "1.22.0": _at(4),
    }


def test_merging_a_status_that_adds_nothing_returns_what_was_noted() -> None:
    mine = _seen(**{"1_21_0": 1})
    assert merge_seen(mine, _seen(**{"1_21_0": 2})) is mine


def test_merging_is_bounded_too() -> None:
    mine = _seen(**{"1_0_0": 0, "1_1_0": 1})
    merged = merge_seen(mine, _seen(**{"1_2_0": 2}), ["1.0.0"], limit=2)
    assert first_seen_times(merged) == {"1.0.0": _at(0), "1.2.0": _at(2)}


def test_a_version_too_long_for_the_status_is_not_noted_and_the_others_are() -> None:
    # A shadow's version has no length bound; the status's record has one. Left unrecorded,
    # the version counts as first seen now: any release age keeps holding it.
    long = "1.21.0-" + "a" * VERSION_MAX_LENGTH
    assert note_offered((), [long, "1.21.0"], T0) == (VersionSeen(version="1.21.0", at=T0),)
    assert note_offered((), [long], T0) == ()
