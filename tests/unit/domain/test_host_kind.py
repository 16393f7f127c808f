"""The host's kind, read from its answer to a settings read: each answer in any shape."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from brupop.domain.host_kind import (
    HOST_NOTE_MAX_LENGTH,
    HostClass,
    HostKind,
    classify_settings_answer,
)

LOCKED = "Live datastore missing: the host is locked down"
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


def test_a_host_with_update_settings_is_updatable() -> None:
    answer = {"updates": {"metadata-base-url": "https://updates", "seed": 1234}}
    assert classify_settings_answer(200, "", answer).kind is HostKind.UPDATABLE
    assert classify_settings_answer(200, "", {"settings": answer}).kind is HostKind.UPDATABLE


def test_a_variant_without_update_settings_has_no_in_place_updates() -> None:
    answers: tuple[dict[str, Any], ...] = ({}, {"updates": {}}, {"settings": {}}, {"motd": "hi"})
    for answer in answers:
        assert classify_settings_answer(200, "", answer).kind is HostKind.NO_IN_PLACE_UPDATES


def test_a_500_naming_the_datastore_is_a_locked_down_host_that_still_takes_updates() -> None:
    found = classify_settings_answer(500, LOCKED, None)
    assert found.kind is HostKind.LOCKED_DOWN
    assert found.kind.takes_updates


def test_any_other_refusal_is_an_unexpected_answer_with_its_status_code() -> None:
    for status in (500, 404, 403, 502):
        found = classify_settings_answer(status, "something else broke", None)
        assert found == HostClass(HostKind.UNEXPECTED_ANSWER, f"settings answered {status}")
        assert not found.kind.takes_updates
    assert "no status" in classify_settings_answer(None, "", None).note


@given(
    status=st.none() | st.integers(-(2**40), 2**40),
    body=st.text(max_size=300),
    document=json_values,
)
def test_any_answer_in_any_shape_gives_a_kind_and_a_bounded_note(
    status: int | None, body: str, document: Any
) -> None:
    found = classify_settings_answer(status, body, document)
    assert isinstance(found.kind, HostKind)
    assert len(found.note) <= HOST_NOTE_MAX_LENGTH


def test_a_long_note_is_shortened_to_its_bound() -> None:
    assert len(HostClass(HostKind.UNEXPECTED_ANSWER, "x" * 500).note) == HOST_NOTE_MAX_LENGTH
