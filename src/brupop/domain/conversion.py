"""Conversion between the BottlerocketShadow versions v1 and v2, and the ConversionReview around it.

The kube-apiserver calls the conversion webhook with a ConversionReview; `convert_review` answers
it and never raises: an object that cannot be converted gives `result.status: Failure`.
Metadata is kept whole. Fields one version cannot express are stashed in an annotation and
restored on the way back, so v1 -> v2 -> v1 and v2 -> v1 -> v2 are lossless.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from brupop.domain.boot_mode import BootMode
from brupop.domain.host_kind import HOST_NOTE_MAX_LENGTH, VARIANT_MAX_LENGTH, HostKind
from brupop.domain.shadow import API_VERSION_V1, API_VERSION_V2, KIND
from brupop.domain.states import UpdateState
from brupop.domain.timestamps import TimestampError, parse_rfc3339
from brupop.domain.versions import is_version

REVIEW_API_VERSION = "apiextensions.k8s.io/v1"
REVIEW_KIND = "ConversionReview"
STASH_ANNOTATION = "brupop.bottlerocket.aws/conversion-stash"
"""Holds, as JSON, what the other version could not express, to restore it on the way back."""

_V1_TO_V2: dict[str, str] = {
    "Idle": UpdateState.IDLE,
    "StagedUpdate": UpdateState.STAGED_AND_PERFORMED_UPDATE,
    "PerformedUpdate": UpdateState.STAGED_AND_PERFORMED_UPDATE,
    "RebootedIntoUpdate": UpdateState.REBOOTED_INTO_UPDATE,
    "MonitoringUpdate": UpdateState.MONITORING_UPDATE,
}
_V2_TO_V1: dict[str, str] = {
    UpdateState.IDLE: "Idle",
    UpdateState.STAGED_AND_PERFORMED_UPDATE: "StagedUpdate",
    UpdateState.REBOOTED_INTO_UPDATE: "RebootedIntoUpdate",
    UpdateState.MONITORING_UPDATE: "MonitoringUpdate",
    UpdateState.ERROR_RESET: "MonitoringUpdate",
}
# Stash keys: (section, field) pairs whose value may not survive a conversion.
_STATE_FIELDS = (("spec", "state"), ("status", "current_state"))
_CREATED_ANNOTATIONS = "annotations_created"  # the stash made metadata.annotations: drop it after
_V2_ONLY_STATUS_FIELDS = (
    "crash_count",
    "state_transition_failure_timestamp",
    "host_kind",
    "host_note",
    "variant",
    "staged_version",
    "staged_state",
    "boot_mode",
    "boot_mode_changed_from",
)
_V2_ONLY_SPEC_FIELDS = ("prestage_version",)
_STAGED_STATES = (None, "Staged", "Ready")
_HOST_TEXT_FIELDS = {
    "host_kind": max(len(kind.value) for kind in HostKind),
    "host_note": HOST_NOTE_MAX_LENGTH,
    "variant": VARIANT_MAX_LENGTH,
}


class ConversionError(ValueError):
    """An object that cannot be converted; the message says why."""


def convert_object(obj: object, desired_api_version: str) -> dict[str, Any]:
    """Convert one BottlerocketShadow to `desired_api_version`, keeping all of its metadata."""
    if not isinstance(obj, dict):
        raise ConversionError("object is not a JSON object")
    source = obj.get("apiVersion")
    if source not in (API_VERSION_V1, API_VERSION_V2):
        raise ConversionError(f"unsupported apiVersion {source!r}")
    if obj.get("kind", KIND) != KIND:
        raise ConversionError(f"unsupported kind {obj.get('kind')!r}")
    if desired_api_version not in (API_VERSION_V1, API_VERSION_V2):
        raise ConversionError(f"unsupported desiredAPIVersion {desired_api_version!r}")
    converted = copy.deepcopy(obj)
    if source == desired_api_version:
        return converted
    if desired_api_version == API_VERSION_V2:
        return _v1_to_v2(converted)
    return _v2_to_v1(converted)


def convert_review(body: object) -> dict[str, object]:
    """Answer a ConversionReview; every failure becomes `result.status: Failure`, never an error."""
    review = body if isinstance(body, dict) else {}
    request = review.get("request")
    uid = request.get("uid", "") if isinstance(request, dict) else ""
    response: dict[str, object] = {"uid": uid if isinstance(uid, str) else ""}
    try:
        response["convertedObjects"] = _convert_request(body, request)
        response["result"] = {"status": "Success"}
    except ConversionError as error:
        response["convertedObjects"] = []
        response["result"] = {"status": "Failure", "message": str(error)}
    api_version = review.get("apiVersion")
    kind = review.get("kind")
    return {
        "apiVersion": api_version if isinstance(api_version, str) else REVIEW_API_VERSION,
        "kind": kind if isinstance(kind, str) else REVIEW_KIND,
        "response": response,
    }


def _convert_request(body: object, request: object) -> list[dict[str, Any]]:
    if not isinstance(body, dict):
        raise ConversionError("the body is not a ConversionReview object")
    if not isinstance(request, dict):
        raise ConversionError("the ConversionReview has no request")
    desired = request.get("desiredAPIVersion")
    objects = request.get("objects")
    if not isinstance(desired, str):
        raise ConversionError("request.desiredAPIVersion is missing")
    if not isinstance(objects, list):
        raise ConversionError("request.objects is not a list")
    converted = []
    for index, obj in enumerate(objects):
        try:
            converted.append(convert_object(obj, desired))
        except ConversionError as error:
            raise ConversionError(f"objects[{index}] ({_describe(obj)}): {error}") from None
    return converted


def _describe(obj: object) -> str:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return f"name {name!r}" if isinstance(name, str) else "unnamed"


def _v1_to_v2(obj: dict[str, Any]) -> dict[str, Any]:
    obj["apiVersion"] = API_VERSION_V2
    stash = _pop_stash(obj)
    spec, status = _sections(obj)
    lost = _convert_states(spec, status, stash, _V1_TO_V2, _V2_TO_V1)
    _check_spec(spec)
    spec.update(_restored_spec(stash))
    if status is not None:
        _check_status_versions(status)
        status.update(_restored_status(stash))
    _put_stash(obj, lost)
    return obj


def _v2_to_v1(obj: dict[str, Any]) -> dict[str, Any]:
    obj["apiVersion"] = API_VERSION_V1
    stash = _pop_stash(obj)
    spec, status = _sections(obj)
    lost = _convert_states(spec, status, stash, _V2_TO_V1, _V1_TO_V2)
    _check_spec(spec)
    spec_extra = {key: spec.pop(key) for key in _V2_ONLY_SPEC_FIELDS if key in spec}
    spec_kept = {key: value for key, value in spec_extra.items() if value is not None}
    if spec_kept:
        lost["spec"] = spec_kept
    if status is not None:
        _check_status_versions(status)
        _check_v2_only_status(status)
        extra = {key: status.pop(key, None) for key in _V2_ONLY_STATUS_FIELDS}
        kept = {key: value for key, value in extra.items() if value not in (None, 0)}
        if kept:
            lost["status"] = kept
    _put_stash(obj, lost)
    return obj


def _convert_states(
    spec: dict[str, Any],
    status: dict[str, Any] | None,
    stash: Mapping[str, Any],
    forward: Mapping[str, str],
    back: Mapping[str, str],
) -> dict[str, Any]:
    """Map spec.state and status.current_state; return what the mapping could not keep."""
    lost: dict[str, Any] = {}
    for section_name, field in _STATE_FIELDS:
        section = spec if section_name == "spec" else status
        if section is None:
            continue
        old = section.get(field)
        if not isinstance(old, str) or old not in forward:
            raise ConversionError(f"{section_name}.{field} {old!r} is not a known state")
        saved = stash.get(f"{section_name}.{field}")
        original = saved.get("from") if isinstance(saved, dict) else None
        if isinstance(saved, dict) and saved.get("to") == old and back.get(str(original)) == old:
            section[field] = original  # the value this one was converted from
        else:
            section[field] = forward[old]
        if back[section[field]] != old:
            lost[f"{section_name}.{field}"] = {"from": old, "to": section[field]}
    return lost


def _restored_status(stash: Mapping[str, Any]) -> dict[str, Any]:
    """crash_count (0 unless stashed) and the failure timestamp (only when stashed)."""
    saved = stash.get("status")
    restored: dict[str, Any] = {"crash_count": 0}
    if isinstance(saved, dict):
        restored.update({key: saved[key] for key in _V2_ONLY_STATUS_FIELDS if key in saved})
        try:
            _check_v2_only_status(restored)
        except ConversionError:
            return {"crash_count": 0}  # a hand-edited stash is ignored, not fatal
    if restored.get("state_transition_failure_timestamp", "") is None:
        del restored["state_transition_failure_timestamp"]
    return restored


def _restored_spec(stash: Mapping[str, Any]) -> dict[str, Any]:
    """The v2-only spec fields a v2 -> v1 conversion stashed (a bad stash is ignored)."""
    saved = stash.get("spec")
    if not isinstance(saved, dict):
        return {}
    restored = {key: saved[key] for key in _V2_ONLY_SPEC_FIELDS if key in saved}
    if not all(isinstance(v, str) and is_version(v) for v in restored.values()):
        return {}
    return restored


def _sections(obj: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    spec = obj.get("spec")
    status = obj.get("status")
    if not isinstance(spec, dict):
        raise ConversionError("spec is missing or not an object")
    if status is not None and not isinstance(status, dict):
        raise ConversionError("status is not an object")
    return spec, status


def _check_spec(spec: Mapping[str, Any]) -> None:
    _check_timestamp(spec, "state_transition_timestamp")
    for field in ("version", *_V2_ONLY_SPEC_FIELDS):
        version = spec.get(field)
        if version is not None and not is_version(version):
            raise ConversionError(f"spec.{field} {version!r} is not a semantic version")


def _check_status_versions(status: Mapping[str, Any]) -> None:
    for field in ("current_version", "target_version"):
        if not is_version(str(status.get(field))):
            raise ConversionError(f"status.{field} {status.get(field)!r} is not a semantic version")


def _check_v2_only_status(status: Mapping[str, Any]) -> None:
    crash_count = status.get("crash_count", 0)
    if crash_count is not None and (
        isinstance(crash_count, bool) or not isinstance(crash_count, int) or crash_count < 0
    ):
        raise ConversionError(f"status.crash_count {crash_count!r} is not a count")
    _check_timestamp(status, "state_transition_failure_timestamp")
    for field, longest in _HOST_TEXT_FIELDS.items():
        value = status.get(field)
        if value is not None and (not isinstance(value, str) or len(value) > longest):
            raise ConversionError(f"status.{field} is not a text of at most {longest} characters")
    staged = status.get("staged_version")
    if staged is not None and not (isinstance(staged, str) and is_version(staged)):
        raise ConversionError(f"status.staged_version {str(staged)[:40]!r} is not a version")
    if status.get("staged_state") not in _STAGED_STATES:
        raise ConversionError("status.staged_state is neither Staged nor Ready")
    kind = status.get("host_kind")
    if kind is not None and kind not in {k.value for k in HostKind}:
        raise ConversionError(f"status.host_kind {kind[:40]!r} is not a host kind")
    for field in ("boot_mode", "boot_mode_changed_from"):
        mode = status.get(field)
        if mode is not None and mode not in {m.value for m in BootMode}:
            raise ConversionError(f"status.{field} {str(mode)[:40]!r} is not a boot mode")


def _check_timestamp(section: Mapping[str, Any], field: str) -> None:
    value = section.get(field)
    if value is None:
        return
    try:
        parse_rfc3339(value)
    except TimestampError:
        raise ConversionError(f"{field} {value!r} is not an RFC 3339 timestamp") from None


def _pop_stash(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return {}
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict) or STASH_ANNOTATION not in annotations:
        return {}
    text = annotations.pop(STASH_ANNOTATION)
    try:
        stash = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):  # nesting deeper than the parser's stack
        stash = None
    if not isinstance(stash, dict):
        stash = {}
    if not annotations and stash.get(_CREATED_ANNOTATIONS) is True:
        del metadata["annotations"]
    return stash


def _put_stash(obj: dict[str, Any], lost: Mapping[str, Any]) -> None:
    if not lost:
        return
    metadata = obj.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        raise ConversionError("metadata is not an object")
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict):
        annotations = metadata["annotations"] = {}
        lost = {**lost, _CREATED_ANNOTATIONS: True}
    annotations[STASH_ANNOTATION] = json.dumps(lost, sort_keys=True, separators=(",", ":"))
