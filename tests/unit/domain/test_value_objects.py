"""A value object behaves as a frozen dataclass would: built by position or name, defaults and
factories, checked after construction, equal and hashed by its fields, and never changed."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import ClassVar

import pytest

from brupop.domain.value_objects import (
    FrozenValueError,
    field,
    field_names,
    replace,
    value_object,
)


@value_object
class Window:
    """A test value: two required fields, two with defaults, one made per value."""

    LIMIT: ClassVar[int] = 10

    start: int
    stop: int
    label: str = "window"
    note: str | None = None
    tags: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.stop < self.start:
            raise ValueError("stop before start")


@value_object
class Other:
    """A value of another class with the same fields as `Window`'s first two."""

    start: int
    stop: int


def test_a_value_is_built_by_position_or_by_name_with_its_defaults() -> None:
    by_position = Window(1, 2, "w")
    by_name = Window(stop=2, start=1, label="w")

    assert by_position == by_name
    assert (by_name.start, by_name.stop, by_name.label, by_name.note) == (1, 2, "w", None)


def test_each_value_gets_its_own_default_from_the_factory() -> None:
    first, second = Window(1, 2), Window(1, 2)

    first.tags.append("x")

    assert second.tags == []
    assert "tags" not in vars(Window)


def test_a_missing_or_unknown_argument_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="missing required argument: 'stop'"):
        Window(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected or repeated argument 'colour'"):
        Window(1, 2, colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected or repeated argument 'start'"):
        Window(1, 2, start=1)  # type: ignore[misc]
    with pytest.raises(TypeError, match="at most 5 positional"):
        Window(1, 2, "w", None, [], 6)  # type: ignore[call-arg]


def test_post_init_checks_every_new_value() -> None:
    with pytest.raises(ValueError, match="stop before start"):
        Window(2, 1)


def test_a_value_refuses_assignment_and_deletion() -> None:
    window = Window(1, 2)

    with pytest.raises(FrozenValueError, match="cannot assign to field 'start'"):
        window.start = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del window.stop
    with pytest.raises(AttributeError):
        window.colour = "red"  # type: ignore[attr-defined]
    assert window.start == 1


def test_values_are_equal_and_hash_alike_by_their_fields_within_one_class() -> None:
    another_class: object = Other(1, 2)

    assert Window(1, 2) == Window(1, 2, tags=[])
    assert Window(1, 2) != Window(1, 3)
    assert Window(1, 2, tags=[]) != another_class
    assert hash(Other(1, 2)) == hash(Other(1, 2))
    assert len({Other(1, 2), Other(1, 2), Other(2, 3)}) == 2


def test_the_repr_names_the_class_and_each_field() -> None:
    assert repr(Other(1, 2)) == "Other(start=1, stop=2)"
    assert repr(Window(1, 2, note="n")) == (
        "Window(start=1, stop=2, label='window', note='n', tags=[])"
    )


def test_class_variables_are_not_fields_and_fields_keep_their_order() -> None:
    assert field_names(Window) == ("start", "stop", "label", "note", "tags")
    assert field_names(Window(1, 2)) == field_names(Window)
    assert Window.__match_args__ == field_names(Window)
    assert Window.LIMIT == 10


def test_replace_builds_a_checked_copy_with_the_changes() -> None:
    window = Window(1, 2, note="kept")

    moved = replace(window, stop=5)

    assert moved == Window(1, 5, note="kept")
    assert window.stop == 2
    with pytest.raises(ValueError, match="stop before start"):
        replace(window, start=9)


def test_a_value_survives_copy_and_pickle_unchanged() -> None:
    window = Window(1, 2, tags=["a"])

    assert copy.deepcopy(window) == window
    assert pickle.loads(pickle.dumps(window)) == window


def test_a_subclass_value_adds_its_fields_after_its_base_fields() -> None:
    @value_object
    class Labelled(Other):
        """`Other` with a label."""

        label: str = ""

    assert field_names(Labelled) == ("start", "stop", "label")
    assert Labelled(1, 2, "x").label == "x"
    assert Labelled(1, 2) != Other(1, 2)


def test_the_standard_dataclass_functions_take_value_objects() -> None:
    window = Window(1, 2, tags=["a"])

    assert dataclasses.is_dataclass(window)
    assert [f.name for f in dataclasses.fields(window)] == list(field_names(Window))
    assert dataclasses.replace(window, stop=3) == Window(1, 3, tags=["a"])
    assert dataclasses.asdict(window) == {
        "start": 1,
        "stop": 2,
        "label": "window",
        "note": None,
        "tags": ["a"],
    }
    with pytest.raises(ValueError, match="stop before start"):
        dataclasses.replace(window, stop=0)
