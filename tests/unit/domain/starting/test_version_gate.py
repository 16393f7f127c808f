"""The version gate: the pin and the release age hold a candidate by its offered version."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from brupop.domain.policy.scheduling_policy import VersionSpec
from brupop.domain.reason import Reason
from brupop.domain.starting.start_holds import StartCandidate, StartHold, StartRule, choose_starts
from brupop.domain.starting.version_gate import (
    VersionGate,
    VersionStanding,
    version_hold,
    version_standings,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _candidate(name: str, version: str) -> StartCandidate:
    return StartCandidate(f"brs-{name}", name, version, None)


def _hold(policy: VersionSpec | None, target: str, **seen: datetime) -> StartHold | None:
    first_seen = {version.replace("_", "."): at for version, at in seen.items()}
    return version_hold(policy, first_seen, target, NOW)


def test_no_version_section_holds_nothing() -> None:
    assert _hold(None, "99.0.0") is None


def test_a_target_newer_than_the_pin_waits_pinned_to_the_pin() -> None:
    assert _hold(VersionSpec(pin="1.20.1"), "1.21.0") == StartHold(
        Reason.PINNED, "pinned to 1.20.1"
    )


def test_a_target_equal_to_the_pin_starts() -> None:
    assert _hold(VersionSpec(pin="1.20.1"), "1.20.1") is None


def test_a_target_older_than_the_pin_starts() -> None:
    assert _hold(VersionSpec(pin="1.20.1"), "1.19.5") is None


def test_the_pin_compares_by_semver_precedence_not_text() -> None:
    # As text "1.9.0" > "1.10.0"; by semver 1.10.0 is the newer one.
    assert _hold(VersionSpec(pin="1.9.0"), "1.10.0") is not None
    assert _hold(VersionSpec(pin="1.10.0"), "1.9.0") is None


def test_a_pre_release_of_the_pinned_version_sorts_before_it_and_starts() -> None:
    assert _hold(VersionSpec(pin="1.21.0"), "1.21.0-rc.1") is None


def test_a_release_after_a_pinned_pre_release_is_newer_and_waits() -> None:
    assert _hold(VersionSpec(pin="1.21.0-rc.1"), "1.21.0") == StartHold(
        Reason.PINNED, "pinned to 1.21.0-rc.1"
    )


def test_build_metadata_does_not_make_a_version_newer_than_the_pin() -> None:
    assert _hold(VersionSpec(pin="1.20.1"), "1.20.1+build.7") is None


def test_a_version_younger_than_the_release_age_waits_until_it_is_old_enough() -> None:
    hold = _hold(
        VersionSpec(min_release_age_hours=24), "1.21.0", **{"1_21_0": NOW - timedelta(hours=3)}
    )
    assert hold == StartHold(
        Reason.RELEASE_TOO_NEW,
        "1.21.0 first offered 2026-11-30T09:00:00+00:00; eligible at 2026-12-01T09:00:00+00:00",
        until=NOW + timedelta(hours=21),
    )


def test_a_version_exactly_as_old_as_the_release_age_starts() -> None:
    policy = VersionSpec(min_release_age_hours=24)
    assert _hold(policy, "1.21.0", **{"1_21_0": NOW - timedelta(hours=24)}) is None


def test_a_version_not_recorded_yet_counts_as_first_offered_now() -> None:
    hold = _hold(VersionSpec(min_release_age_hours=2), "1.21.0")
    assert hold is not None and hold.reason is Reason.RELEASE_TOO_NEW
    assert hold.detail.endswith("eligible at 2026-11-30T14:00:00+00:00")


def test_no_release_age_lets_a_version_just_offered_start() -> None:
    assert _hold(VersionSpec(pin="2.0.0"), "1.21.0", **{"1_21_0": NOW}) is None


def test_the_pin_names_the_reason_before_the_release_age() -> None:
    hold = _hold(VersionSpec(pin="1.20.1", min_release_age_hours=24), "1.21.0")
    assert hold is not None and hold.reason is Reason.PINNED


def test_the_gate_is_a_start_rule_that_holds_only_the_pinned_out_candidates() -> None:
    gate: StartRule = VersionGate(VersionSpec(pin="1.20.1"), {})
    old, new = _candidate("a", "1.20.1"), _candidate("b", "1.21.0")
    choice = choose_starts([new, old], free=2, rules=(gate,), now=NOW)
    assert choice.starts == (old,)
    assert choice.holds == {"brs-b": StartHold(Reason.PINNED, "pinned to 1.20.1")}


def test_standings_list_each_version_with_its_eligibility_oldest_first() -> None:
    early, late = NOW - timedelta(days=3), NOW - timedelta(hours=1)
    policy = VersionSpec(min_release_age_hours=48)
    standings = version_standings(policy, {"1.21.0": late, "1.20.1": early}, {"1.21.0": 3}, NOW)
    eligible = late + timedelta(hours=48)
    assert standings == [
        VersionStanding("1.20.1", early, early + timedelta(hours=48), 0, None),
        VersionStanding(
            "1.21.0",
            late,
            eligible,
            3,
            StartHold(
                Reason.RELEASE_TOO_NEW,
                "1.21.0 first offered 2026-11-30T11:00:00+00:00; "
                "eligible at 2026-12-02T11:00:00+00:00",
                until=eligible,
            ),
        ),
    ]


def test_a_standing_reads_as_the_status_json_entry() -> None:
    policy = VersionSpec(pin="1.20.1", min_release_age_hours=1)
    (standing,) = version_standings(policy, {"1.21.0": NOW}, {"1.21.0": 2}, NOW)
    assert standing.as_json() == {
        "version": "1.21.0",
        "first_seen": "2026-11-30T12:00:00+00:00",
        "eligible_at": "2026-11-30T13:00:00+00:00",
        "nodes": 2,
        "reason": "pinned",
        "waiting": "pinned to 1.20.1",
    }


def test_standings_have_no_eligibility_nor_hold_without_a_version_section() -> None:
    assert version_standings(None, {"1.21.0": NOW}, {}, NOW) == [
        VersionStanding("1.21.0", NOW, None, 0, None)
    ]


def test_a_recorded_version_no_node_is_offered_has_no_hold_even_if_it_is_no_semver() -> None:
    policy = VersionSpec(pin="1.20.1", min_release_age_hours=1)
    (standing,) = version_standings(policy, {"not-a-version": NOW}, {}, NOW)
    assert standing.hold is None and standing.nodes == 0
