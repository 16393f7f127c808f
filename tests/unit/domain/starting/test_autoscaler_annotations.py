"""The autoscaler annotations brupop sets on a node outside Idle, and what it puts back."""

from __future__ import annotations

import json

from brupop.domain.starting.autoscaler_annotations import (
    AUTOSCALER_RECORD_ANNOTATION as RECORD,
)
from brupop.domain.starting.autoscaler_annotations import (
    DO_NOT_DISRUPT_ANNOTATION as KARPENTER,
)
from brupop.domain.starting.autoscaler_annotations import (
    PREVIOUS_VALUE_MAX,
    guard_changes,
    is_recorded,
    read_record,
    restore_changes,
)
from brupop.domain.starting.autoscaler_annotations import (
    SCALE_DOWN_DISABLED_ANNOTATION as SCALE_DOWN,
)


def _apply(annotations: dict[str, str], changes: dict[str, str | None]) -> dict[str, str]:
    merged = dict(annotations)
    for key, value in changes.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def test_a_bare_node_gets_both_annotations_and_a_record_of_their_absence() -> None:
    changes = guard_changes({"team": "a"})
    assert changes[SCALE_DOWN] == "true" and changes[KARPENTER] == "true"
    assert json.loads(changes[RECORD] or "") == {KARPENTER: None, SCALE_DOWN: None}


def test_a_node_set_and_restored_ends_with_exactly_its_annotations_before() -> None:
    before = {"team": "a", KARPENTER: "false"}
    during = _apply(before, guard_changes(before))
    assert during[KARPENTER] == "true" and during[SCALE_DOWN] == "true"
    assert _apply(during, restore_changes(during)) == before


def test_an_annotation_already_true_before_brupop_is_not_recorded_and_stays_after() -> None:
    before = {KARPENTER: "true"}
    changes = guard_changes(before)
    assert KARPENTER not in changes
    assert read_record(_apply(before, changes)) == {SCALE_DOWN: None}
    during = _apply(before, changes)
    assert _apply(during, restore_changes(during)) == {KARPENTER: "true"}


def test_a_node_already_carrying_both_needs_no_write_and_no_record() -> None:
    assert guard_changes({KARPENTER: "true", SCALE_DOWN: "true"}) == {}


def test_a_guarded_node_needs_no_second_write() -> None:
    during = _apply({}, guard_changes({}))
    assert guard_changes(during) == {}


def test_a_recorded_annotation_someone_changed_meanwhile_is_neither_forced_nor_restored() -> None:
    during = _apply({}, guard_changes({}))
    during[KARPENTER] = "false"  # an administrator's decision while the node updates
    assert guard_changes(during) == {}
    after = _apply(during, restore_changes(during))
    assert after == {KARPENTER: "false"}


def test_a_node_without_a_record_has_nothing_restored() -> None:
    assert restore_changes({KARPENTER: "true", SCALE_DOWN: "true"}) == {}
    assert not is_recorded({KARPENTER: "true"})


def test_an_unreadable_record_is_removed_and_nothing_else_touched() -> None:
    during = {KARPENTER: "true", RECORD: "{not json"}
    assert restore_changes(during) == {RECORD: None}
    assert restore_changes({RECORD: '["a list"]'}) == {RECORD: None}


def test_a_deeply_nested_record_within_the_size_bound_reads_as_unreadable() -> None:
    # Anyone who may annotate Nodes can write this; json's recursion limit must not escape
    # from a controller pass as a traceback.
    nested = "[" * 2000
    assert read_record({RECORD: nested}) == {}
    assert restore_changes({KARPENTER: "true", RECORD: nested}) == {RECORD: None}


def test_a_record_naming_other_keys_restores_only_the_autoscaler_ones() -> None:
    record = json.dumps({KARPENTER: None, "team": "b"})
    during = {KARPENTER: "true", "team": "a", RECORD: record}
    assert restore_changes(during) == {RECORD: None, KARPENTER: None}


def test_a_previous_value_too_long_to_record_is_left_alone() -> None:
    long_value = "x" * (PREVIOUS_VALUE_MAX + 1)
    changes = guard_changes({KARPENTER: long_value})
    assert KARPENTER not in changes
    assert read_record(_apply({}, changes)) == {SCALE_DOWN: None}
