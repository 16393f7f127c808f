"""The order nodes get slots in: fewest crashes, then name; the controller's own node last."""

from brupop.domain.rollout.ordering import update_order
from tests.unit.domain.controller_shadows import shadow

_fleet = [
    shadow("c", crashes=0),
    shadow("a", crashes=2),
    shadow("b", crashes=0),
    shadow("d", state=None),
    shadow("e", crashes=1),
]


def _names(shuffled: list[int], controller: str | None = None) -> list[str]:
    return [s.node_name for s in update_order([_fleet[i] for i in shuffled], controller)]


def test_fewest_crashes_first_then_by_name_whatever_the_input_order() -> None:
    expected = ["b", "c", "e", "a", "d"]
    assert _names([0, 1, 2, 3, 4]) == expected
    assert _names([4, 3, 2, 1, 0]) == expected
    assert _names([2, 4, 0, 3, 1]) == expected


def test_shadows_without_status_come_after_every_shadow_with_one() -> None:
    assert _names([3, 1])[-1] == "d"


def test_the_node_hosting_the_controller_goes_last_even_with_no_crashes() -> None:
    assert _names([0, 1, 2, 3, 4], controller="b") == ["c", "e", "a", "d", "b"]


def test_an_unknown_controller_node_changes_nothing() -> None:
    assert _names([0, 1, 2, 3, 4], controller="zz") == ["b", "c", "e", "a", "d"]
