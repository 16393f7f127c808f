"""Which in-flight nodes go back to Idle before their reboot when the fleet stops wanting it."""

from __future__ import annotations

import pytest

from brupop.domain.safety.withdrawal import is_withdrawn
from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState as S


def _shadow(spec: S, status: S, current: str = "1.0.0") -> Shadow:
    return Shadow(
        name="brs-n",
        namespace="ns",
        node_name="n",
        node_uid="u",
        spec=ShadowSpec(state=spec, version="1.1.0"),
        status=ShadowStatus(current_version=current, target_version="1.1.0", current_state=status),
    )


@pytest.mark.parametrize(
    ("spec", "status"),
    [
        (S.STAGED_AND_PERFORMED_UPDATE, S.IDLE),  # staging
        (S.STAGED_AND_PERFORMED_UPDATE, S.STAGED_AND_PERFORMED_UPDATE),  # activated
        (S.REBOOTED_INTO_UPDATE, S.STAGED_AND_PERFORMED_UPDATE),  # draining
    ],
)
def test_a_node_not_yet_rebooted_is_withdrawn_when_the_fleet_stops(spec: S, status: S) -> None:
    shadow = _shadow(spec, status)
    assert is_withdrawn(shadow, stopped=True, pin=None)
    assert not is_withdrawn(shadow, stopped=False, pin=None)


def test_a_pin_below_the_version_in_flight_withdraws_it_and_one_at_or_above_does_not() -> None:
    shadow = _shadow(S.STAGED_AND_PERFORMED_UPDATE, S.STAGED_AND_PERFORMED_UPDATE)
    assert is_withdrawn(shadow, stopped=False, pin="1.0.5")
    assert not is_withdrawn(shadow, stopped=False, pin="1.1.0")


def test_a_node_that_rebooted_into_its_update_finishes() -> None:
    rebooted = _shadow(S.MONITORING_UPDATE, S.REBOOTED_INTO_UPDATE, current="1.1.0")
    assert not is_withdrawn(rebooted, stopped=True, pin=None)
    booted = _shadow(S.REBOOTED_INTO_UPDATE, S.STAGED_AND_PERFORMED_UPDATE, current="1.1.0")
    assert not is_withdrawn(booted, stopped=True, pin=None)
