"""The rollout's target version: the highest version offered, by semver."""

from __future__ import annotations

from brupop.domain.reporting.fleet_status import highest_version


def test_the_highest_of_counted_versions_is_by_semver_not_by_text() -> None:
    assert highest_version(["1.20.9", "1.20.10", "1.19.0"]) == "1.20.10"
    assert highest_version([]) is None
