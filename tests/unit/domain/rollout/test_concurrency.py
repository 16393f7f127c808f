"""MAX_CONCURRENT_UPDATE and who holds a slot."""

import pytest

from brupop.domain.rollout.concurrency import (
    ConcurrencyLimit,
    ConcurrencyLimitError,
    holds_slot,
    slots_held,
)
from brupop.domain.states import UpdateState as S
from tests.unit.domain.controller_shadows import shadow


@pytest.mark.parametrize(
    ("text", "maximum"),
    [("1", 1), ("3", 3), (" 10 ", 10), ("unlimited", None), ("UNLIMITED", None)],
)
def test_positive_integers_and_unlimited_are_accepted(text: str, maximum: int | None) -> None:
    assert ConcurrencyLimit.parse(text).maximum == maximum


@pytest.mark.parametrize("text", ["0", "-1", "two", "", "1.5", "inf"])
def test_anything_else_is_refused_with_the_accepted_forms(text: str) -> None:
    with pytest.raises(ConcurrencyLimitError, match=r"positive integer .* or `unlimited`"):
        ConcurrencyLimit.parse(text)


def test_free_slots_never_go_negative_and_never_exceed_the_wanted_count() -> None:
    three = ConcurrencyLimit(3)
    assert three.free_slots(0, wanted=10) == 3
    assert three.free_slots(2, wanted=10) == 1
    assert three.free_slots(5, wanted=10) == 0
    assert three.free_slots(0, wanted=2) == 2
    assert ConcurrencyLimit(None).free_slots(1000, wanted=7) == 7


@pytest.mark.parametrize(
    ("spec", "state", "held"),
    [
        (S.IDLE, S.IDLE, False),
        (S.IDLE, None, False),
        (S.STAGED_AND_PERFORMED_UPDATE, S.IDLE, True),
        (S.STAGED_AND_PERFORMED_UPDATE, None, True),
        (S.IDLE, S.MONITORING_UPDATE, True),
        (S.IDLE, S.ERROR_RESET, True),
        (S.REBOOTED_INTO_UPDATE, S.REBOOTED_INTO_UPDATE, True),
    ],
)
def test_a_node_holds_a_slot_while_spec_or_status_is_outside_idle(
    spec: S, state: S | None, held: bool
) -> None:
    assert holds_slot(shadow("n", spec=spec, state=state)) is held


def test_slots_held_counts_nodes() -> None:
    fleet = [
        shadow("a"),
        shadow("b", spec=S.STAGED_AND_PERFORMED_UPDATE),
        shadow("c", state=S.ERROR_RESET),
    ]
    assert slots_held(fleet) == 2
