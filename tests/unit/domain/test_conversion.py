"""Conversion webhook logic: v1 <-> v2 mapping, lossless round trips, Failure, never a raise."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.conversion import STASH_ANNOTATION, convert_object, convert_review
from brupop.domain.shadow import API_VERSION_V1, API_VERSION_V2

NODE = "ip-192-168-141-69.us-west-2.compute.internal"


def seed_shadow() -> dict[str, Any]:
    """The shadow printed by the seed's agent log line (2022-06-28), in its v2 wire form."""
    return {
        "apiVersion": API_VERSION_V2,
        "kind": "BottlerocketShadow",
        "metadata": {
            "creationTimestamp": "2022-06-28T07:05:04Z",
            "generation": 3,
            "managedFields": [
                {
                    "apiVersion": API_VERSION_V2,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:spec": {".": {}, "f:state": {}, "f:version": {}},
                        "f:status": {".": {}, "f:crash_count": {}, "f:current_state": {}},
                    },
                    "manager": "unknown",
                    "operation": "Update",
                    "time": "2022-06-28T07:05:24Z",
                }
            ],
            "name": f"brs-{NODE}",
            "namespace": "brupop-bottlerocket-aws",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": NODE,
                    "uid": "e77d33d5-2f4f-491e-9755-cb9ee36545b7",
                }
            ],
            "resourceVersion": "14629549",
            "uid": "391f21d1-b22a-4c88-a1d5-efa73293fad3",
        },
        "spec": {
            "state": "RebootedIntoUpdate",
            "state_transition_timestamp": "2022-06-28T07:12:21.899994323+00:00",
            "version": "1.8.0",
        },
        "status": {
            "current_version": "1.6.1",
            "target_version": "1.8.0",
            "current_state": "StagedAndPerformedUpdate",
            "crash_count": 0,
        },
    }


def review(objects: list[Any], desired: str, uid: str = "705ab4f5-6393-11e8") -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
    }


def converted(body: dict[str, object]) -> list[dict[str, Any]]:
    response = body["response"]
    assert isinstance(response, dict)
    assert response["result"] == {"status": "Success"}, response["result"]
    objects = response["convertedObjects"]
    assert isinstance(objects, list)
    return objects


def test_seed_shadow_converts_to_v1_with_the_reference_mapping_and_all_metadata() -> None:
    original = seed_shadow()
    original["metadata"]["labels"] = {"team": "infra"}
    original["metadata"]["annotations"] = {"note": "kept"}

    (v1,) = converted(convert_review(review([original], API_VERSION_V1)))

    assert v1["apiVersion"] == API_VERSION_V1
    assert v1["metadata"] == original["metadata"]
    assert v1["spec"] == original["spec"]
    assert v1["status"] == {
        "current_version": "1.6.1",
        "target_version": "1.8.0",
        "current_state": "StagedUpdate",
    }


def test_seed_shadow_round_trips_v2_to_v1_to_v2_unchanged() -> None:
    original = seed_shadow()
    (v1,) = converted(convert_review(review([original], API_VERSION_V1)))
    (back,) = converted(convert_review(review([v1], API_VERSION_V2)))
    assert back == original


def test_v1_object_round_trips_v1_to_v2_to_v1_even_from_performed_update() -> None:
    v1 = seed_shadow()
    v1["apiVersion"] = API_VERSION_V1
    v1["spec"]["state"] = "PerformedUpdate"
    v1["status"] = {"current_version": "1.6.1", "target_version": "1.8.0", "current_state": "Idle"}
    v1["metadata"]["labels"] = {"a": "b"}

    (v2,) = converted(convert_review(review([v1], API_VERSION_V2)))
    assert v2["spec"]["state"] == "StagedAndPerformedUpdate"
    assert v2["status"]["crash_count"] == 0
    assert "state_transition_failure_timestamp" not in v2["status"]

    (back,) = converted(convert_review(review([v2], API_VERSION_V1)))
    assert back == v1


def test_error_reset_and_crash_count_survive_a_trip_through_v1() -> None:
    v2 = seed_shadow()
    v2["spec"]["state"] = "ErrorReset"
    v2["status"]["current_state"] = "ErrorReset"
    v2["status"]["crash_count"] = 3
    v2["status"]["state_transition_failure_timestamp"] = "2022-06-28T07:20:00+00:00"

    v1 = convert_object(v2, API_VERSION_V1)
    assert v1["spec"]["state"] == "MonitoringUpdate"
    assert v1["status"]["current_state"] == "MonitoringUpdate"
    assert "crash_count" not in v1["status"]
    assert STASH_ANNOTATION in v1["metadata"]["annotations"]

    assert convert_object(v1, API_VERSION_V2) == v2


def test_a_state_changed_by_a_v1_client_wins_over_the_stash() -> None:
    v2 = seed_shadow()
    v2["spec"]["state"] = "ErrorReset"
    v2["status"]["crash_count"] = 2
    v1 = convert_object(v2, API_VERSION_V1)
    v1["spec"]["state"] = "Idle"  # a v1 client edits the spec

    back = convert_object(v1, API_VERSION_V2)

    assert back["spec"]["state"] == "Idle"
    assert back["status"]["crash_count"] == 2
    assert "annotations" not in back["metadata"]


def test_a_stash_nested_deeper_than_the_json_parser_is_dropped_not_raised() -> None:
    v1 = convert_object(seed_shadow(), API_VERSION_V1)
    v1["metadata"]["annotations"] = {STASH_ANNOTATION: "[" * 100_000}

    back = convert_object(v1, API_VERSION_V2)

    assert back["spec"]["state"] == v1["spec"]["state"]
    assert STASH_ANNOTATION not in back["metadata"].get("annotations", {})


def test_same_version_is_passed_through_untouched() -> None:
    original = seed_shadow()
    assert converted(convert_review(review([original], API_VERSION_V2))) == [original]


def test_review_echoes_uid_kind_and_api_version() -> None:
    body = convert_review(review([seed_shadow()], API_VERSION_V1, uid="abc-123"))
    assert body["apiVersion"] == "apiextensions.k8s.io/v1"
    assert body["kind"] == "ConversionReview"
    assert isinstance(body["response"], dict)
    assert body["response"]["uid"] == "abc-123"


def test_shadow_without_status_converts_both_ways() -> None:
    fresh = seed_shadow()
    del fresh["status"]
    v1 = convert_object(fresh, API_VERSION_V1)
    assert "status" not in v1
    assert convert_object(v1, API_VERSION_V2) == fresh


def failure_message(body: dict[str, object]) -> str:
    response = body["response"]
    assert isinstance(response, dict)
    assert response["convertedObjects"] == []
    result = response["result"]
    assert isinstance(result, dict)
    assert result["status"] == "Failure"
    message = result["message"]
    assert isinstance(message, str)
    return message


def test_bad_timestamp_gives_failure_naming_the_object_not_a_crash() -> None:
    bad = seed_shadow()
    bad["spec"]["state_transition_timestamp"] = "yesterday"
    message = failure_message(convert_review(review([seed_shadow(), bad], API_VERSION_V1)))
    assert "objects[1]" in message
    assert f"brs-{NODE}" in message
    assert "yesterday" in message


def test_unknown_state_gives_failure() -> None:
    bad = seed_shadow()
    bad["status"]["current_state"] = "Exploded"
    assert "Exploded" in failure_message(convert_review(review([bad], API_VERSION_V1)))


def test_bad_version_gives_failure() -> None:
    bad = seed_shadow()
    bad["apiVersion"] = API_VERSION_V1
    bad["status"]["current_state"] = "Idle"
    bad["status"]["current_version"] = "v1.6"
    assert "v1.6" in failure_message(convert_review(review([bad], API_VERSION_V2)))


def test_unknown_api_versions_give_failure() -> None:
    other = seed_shadow()
    other["apiVersion"] = "brupop.bottlerocket.aws/v3"
    assert "v3" in failure_message(convert_review(review([other], API_VERSION_V1)))
    assert "v9" in failure_message(
        convert_review(review([seed_shadow()], "brupop.bottlerocket.aws/v9"))
    )


def test_review_without_request_gives_failure_with_empty_uid() -> None:
    body = convert_review({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"})
    assert failure_message(body)
    assert isinstance(body["response"], dict)
    assert body["response"]["uid"] == ""


def test_non_object_body_gives_a_failure_review() -> None:
    body = convert_review(["not", "a", "review"])
    assert body["kind"] == "ConversionReview"
    assert failure_message(body)


def test_converting_does_not_modify_the_request() -> None:
    request = review([seed_shadow()], API_VERSION_V1)
    snapshot = copy.deepcopy(request)
    convert_review(request)
    assert request == snapshot


V2_STATES = [
    "Idle",
    "StagedAndPerformedUpdate",
    "RebootedIntoUpdate",
    "MonitoringUpdate",
    "ErrorReset",
]


def test_the_host_kind_survives_a_trip_through_v1() -> None:
    v2 = seed_shadow()
    v2["status"].update(host_kind="no_in_place_updates", host_note="no updates", variant="aws-dev")

    v1 = convert_object(v2, API_VERSION_V1)
    assert "host_kind" not in v1["status"]
    assert convert_object(v1, API_VERSION_V2) == v2


def test_a_host_kind_brupop_does_not_know_gives_failure_not_a_crash() -> None:
    v2 = seed_shadow()
    v2["status"]["host_kind"] = "mainframe"

    message = failure_message(convert_review(review([v2], API_VERSION_V1)))
    assert "host_kind" in message


V1_STATES = ["Idle", "StagedUpdate", "PerformedUpdate", "RebootedIntoUpdate", "MonitoringUpdate"]
versions = st.sampled_from(["1.6.1", "1.8.0", "1.19.2", "2.0.0-rc.1"])
timestamps = st.sampled_from(
    [
        None,
        "2022-06-28T07:12:21.899994323+00:00",
        "2026-01-05T10:00:00+00:00",
        "2024-03-01T00:00:00Z",
    ]
)
labels = st.dictionaries(st.sampled_from(["a", "team", "x/y"]), st.text(max_size=5), max_size=2)


@st.composite
def shadows(draw: st.DrawFn, api_version: str) -> dict[str, Any]:
    states = V2_STATES if api_version == API_VERSION_V2 else V1_STATES
    obj = seed_shadow()
    obj["apiVersion"] = api_version
    obj["metadata"]["labels"] = draw(labels)
    if draw(st.booleans()):
        obj["metadata"]["annotations"] = draw(labels)
    obj["spec"] = {"state": draw(st.sampled_from(states)), "version": draw(versions)}
    if (stamp := draw(timestamps)) is not None:
        obj["spec"]["state_transition_timestamp"] = stamp
    if draw(st.booleans()):
        del obj["status"]
        return obj
    obj["status"] = {
        "current_version": draw(versions),
        "target_version": draw(versions),
        "current_state": draw(st.sampled_from(states)),
    }
    if api_version == API_VERSION_V2:
        obj["status"]["crash_count"] = draw(st.integers(0, 2**32 - 1))
        if (failed := draw(timestamps)) is not None:
            obj["status"]["state_transition_failure_timestamp"] = failed
        if draw(st.booleans()):
            obj["status"]["host_kind"] = draw(st.sampled_from(["locked_down", "updatable"]))
            obj["status"]["host_note"] = draw(st.text(max_size=120))
            obj["status"]["variant"] = draw(st.sampled_from(["aws-k8s-1.30", "aws-dev"]))
    return obj


@settings(max_examples=150)
@given(shadows(API_VERSION_V2))
def test_every_v2_shadow_round_trips_through_v1(original: dict[str, Any]) -> None:
    assert convert_object(convert_object(original, API_VERSION_V1), API_VERSION_V2) == original


@settings(max_examples=150)
@given(shadows(API_VERSION_V1))
def test_every_v1_shadow_round_trips_through_v2(original: dict[str, Any]) -> None:
    assert convert_object(convert_object(original, API_VERSION_V2), API_VERSION_V1) == original


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)


def mangled_shadows() -> st.SearchStrategy[Any]:
    """A real shadow with one field replaced by arbitrary JSON."""
    paths = [
        ("spec",),
        ("status",),
        ("metadata",),
        ("spec", "state"),
        ("spec", "version"),
        ("spec", "state_transition_timestamp"),
        ("status", "crash_count"),
        ("status", "current_state"),
        ("status", "state_transition_failure_timestamp"),
        ("metadata", "annotations"),
    ]

    def mangle(path: tuple[str, ...], value: Any) -> dict[str, Any]:
        obj = seed_shadow()
        target = obj
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return obj

    return st.builds(mangle, st.sampled_from(paths), json_values)


@settings(max_examples=300)
@given(
    st.one_of(
        json_values,
        st.builds(review, st.lists(json_values, max_size=2), st.sampled_from([API_VERSION_V1])),
        st.builds(
            review,
            st.lists(mangled_shadows(), min_size=1, max_size=1),
            st.sampled_from([API_VERSION_V1, API_VERSION_V2]),
        ),
    )
)
def test_any_json_body_gets_a_review_answer_never_an_exception(body: Any) -> None:
    answer = convert_review(body)
    json.dumps(answer)
    response = answer["response"]
    assert isinstance(response, dict)
    assert response["result"]["status"] in ("Success", "Failure")


def test_stash_annotation_with_garbage_is_ignored() -> None:
    v1 = convert_object(seed_shadow(), API_VERSION_V1)
    v1["metadata"]["annotations"] = {STASH_ANNOTATION: "{not json", "keep": "me"}
    v2 = convert_object(v1, API_VERSION_V2)
    assert v2["status"]["crash_count"] == 0
    assert v2["metadata"]["annotations"] == {"keep": "me"}
