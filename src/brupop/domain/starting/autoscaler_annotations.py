"""The annotations that keep autoscalers off a node while brupop updates it, and their undoing.

While a node is outside Idle, brupop sets `cluster-autoscaler.kubernetes.io/scale-down-disabled`
and `karpenter.sh/do-not-disrupt` to `true`, so neither autoscaler removes it mid-update. What
it changed is written on the Node itself, in an annotation of brupop's own holding each key's
previous value (JSON; null for absent), so any controller replica, after any restart, can put
back exactly what was there. A key that already said `true` is not recorded: it was not
brupop's to add and it is left as it is on the way back. A recorded key someone changed since
is theirs: brupop neither forces it back to `true` nor restores it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

SCALE_DOWN_DISABLED_ANNOTATION = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
DO_NOT_DISRUPT_ANNOTATION = "karpenter.sh/do-not-disrupt"
GUARD_VALUE = "true"
GUARD_ANNOTATIONS = (SCALE_DOWN_DISABLED_ANNOTATION, DO_NOT_DISRUPT_ANNOTATION)
# brupop's record of what it changed: {"<key>": "<previous value>" | null}.
AUTOSCALER_RECORD_ANNOTATION = "brupop.bottlerocket.aws/autoscaler-annotations"
# A previous value longer than this is not recorded, and its key is then left alone: the record
# stays small whatever an administrator put there.
PREVIOUS_VALUE_MAX = 1024
_RECORD_MAX = 2 * PREVIOUS_VALUE_MAX + 256

AnnotationChanges = dict[str, str | None]  # what NodeRepository.set_annotations takes


def read_record(annotations: Mapping[str, str]) -> dict[str, str | None]:
    """The previous values brupop recorded on a node (empty when there is no record, or one
    it cannot read: then nothing is restored but the record itself is removed)."""
    text = annotations.get(AUTOSCALER_RECORD_ANNOTATION)
    if text is None or len(text) > _RECORD_MAX:
        return {}
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):  # nesting deeper than the parser's stack
        return {}
    if not isinstance(parsed, dict):
        return {}
    return {
        key: value
        for key, value in parsed.items()
        if key in GUARD_ANNOTATIONS
        and (value is None or (isinstance(value, str) and len(value) <= PREVIOUS_VALUE_MAX))
    }


def is_recorded(annotations: Mapping[str, str]) -> bool:
    """brupop's record is on the node: it changed something there still to be put back."""
    return AUTOSCALER_RECORD_ANNOTATION in annotations


def guard_changes(annotations: Mapping[str, str]) -> AnnotationChanges:
    """What to write so a node outside Idle carries both annotations (empty: it does, or
    what it carries instead is someone else's choice)."""
    record = read_record(annotations)
    changes: AnnotationChanges = {}
    for key in GUARD_ANNOTATIONS:
        current = annotations.get(key)
        if current == GUARD_VALUE or key in record:
            continue
        if current is not None and len(current) > PREVIOUS_VALUE_MAX:
            continue
        changes[key] = GUARD_VALUE
        record[key] = current
    if changes:
        changes[AUTOSCALER_RECORD_ANNOTATION] = _record_text(record)
    return changes


def restore_changes(annotations: Mapping[str, str]) -> AnnotationChanges:
    """What to write so a node back in Idle carries what it had before brupop (empty: there is
    no record). A recorded key whose value is no longer brupop's `true` is left as it is."""
    if not is_recorded(annotations):
        return {}
    changes: AnnotationChanges = {AUTOSCALER_RECORD_ANNOTATION: None}
    for key, previous in read_record(annotations).items():
        if annotations.get(key) == GUARD_VALUE:
            changes[key] = previous
    return changes


def _record_text(record: Mapping[str, str | None]) -> str:
    return json.dumps(dict(sorted(record.items())), separators=(",", ":"))
