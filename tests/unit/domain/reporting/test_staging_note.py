"""`brupop status` shows staging between turns as its own phase, after the node's reason."""

from __future__ import annotations

from brupop.domain.reporting.staging_note import with_staging
from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState


def _shadow(
    *,
    asked: str | None = None,
    staged: str | None = None,
    state: str | None = None,
    spec_state: UpdateState = UpdateState.IDLE,
) -> Shadow:
    return Shadow(
        name="brs-a",
        namespace="ns",
        node_name="a",
        node_uid="u",
        spec=ShadowSpec(state=spec_state, version=None, prestage_version=asked),
        status=ShadowStatus(
            current_version="1.19.0",
            target_version="1.20.0",
            current_state=UpdateState.IDLE,
            staged_version=staged,
            staged_state=state,
        ),
    )


def test_a_node_asked_to_prepare_ahead_shows_it_is_staging() -> None:
    note = with_staging("outside the update windows", _shadow(asked="1.20.0"))
    assert note == "outside the update windows; staging 1.20.0 ahead"


def test_a_prepared_node_shows_the_version_staged_ahead() -> None:
    shadow = _shadow(asked="1.20.0", staged="1.20.0", state="Staged")
    assert with_staging("", shadow) == "1.20.0 staged ahead"


def test_a_host_left_activated_says_so() -> None:
    shadow = _shadow(staged="1.20.0", state="Ready")
    assert with_staging("paused", shadow) == "paused; 1.20.0 activated, not rebooted"


def test_a_node_in_its_turn_or_holding_nothing_shows_its_reason_alone() -> None:
    assert with_staging("waiting", _shadow()) == "waiting"
    turn = _shadow(staged="1.20.0", state="Staged", spec_state=UpdateState.REBOOTED_INTO_UPDATE)
    assert with_staging("updating", turn) == "updating"
