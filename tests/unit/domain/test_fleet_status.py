"""The rollout's target version: the highest version offered, by semver."""

from __future__ import annotations

from brupop.domain.fleet_status import highest_version, rollout_target
from brupop.domain.states import UpdateState
from tests.unit.domain.controller_shadows import OLD, shadow

FLEET = [
    shadow("a", target="1.20.10"),
    shadow("b", target="1.20.9", state=UpdateState.MONITORING_UPDATE),
    shadow("c", target=OLD, state=UpdateState.ERROR_RESET),
    shadow("d", state=None),
]


def test_the_rollout_is_to_the_highest_version_offered_by_semver() -> None:
    assert rollout_target(FLEET) == "1.20.10"
    assert rollout_target([shadow("d", state=None)]) is None


def test_the_highest_of_counted_versions_is_by_semver_not_by_text() -> None:
    assert highest_version(["1.20.9", "1.20.10", "1.19.0"]) == "1.20.10"
    assert highest_version([]) is None
