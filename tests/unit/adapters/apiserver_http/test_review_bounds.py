"""A ConversionReview is checked against what a shadow can be before the worker converts it: too
many objects or an object too large is a 413 with a short reason, nesting deeper than a shadow's
is a 400 (never a RecursionError, whatever the depth), and a full batch of real shadows passes."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from brupop.adapters.apiserver_http.conversion.answer import answer_to
from brupop.adapters.apiserver_http.conversion.frames import (
    BAD_REVIEW,
    REVIEW,
    TOO_LARGE,
    read_frame,
    write_frame,
)
from brupop.adapters.apiserver_http.conversion.review_bounds import (
    MAX_OBJECT_BYTES,
    MAX_OBJECT_DEPTH,
    MAX_OBJECTS,
    BadReviewError,
    ReviewTooLargeError,
)
from brupop.adapters.apiserver_http.conversion.worker import _serve


def shadow(index: int, padding: int = 0) -> dict[str, Any]:
    return {
        "apiVersion": "brupop.bottlerocket.aws/v2",
        "kind": "BottlerocketShadow",
        "metadata": {
            "name": f"brs-node-{index}",
            "namespace": "brupop-bottlerocket-aws",
            "annotations": {"note": "x" * padding},
            "managedFields": [
                {
                    "manager": "brupop-agent",
                    "fieldsV1": {"f:status": {".": {}, "f:current_state": {}}},
                }
            ],
        },
        "spec": {"state": "Idle", "version": "1.2.3"},
        "status": {"current_version": "1.2.3", "target_version": "1.2.3", "current_state": "Idle"},
    }


def review_text(objects: list[Any]) -> bytes:
    request = {"uid": "u1", "desiredAPIVersion": "brupop.bottlerocket.aws/v1", "objects": objects}
    return json.dumps({"apiVersion": "apiextensions.k8s.io/v1", "request": request}).encode()


def nested_review_text(depth: int) -> bytes:
    """A review whose one shadow carries an object `depth` levels deep, written as raw text."""
    deep = '{"a":' * depth + "1" + "}" * depth
    one = json.dumps(shadow(0))[:-1] + ', "extra": ' + deep + "}"
    head = '{"request": {"uid": "u1", "desiredAPIVersion": "brupop.bottlerocket.aws/v1", '
    return (head + '"objects": [' + one + "]}}").encode()


def worker_frame(body: bytes) -> tuple[bytes, bytes] | None:
    """What the worker answers for one review."""
    answers = io.BytesIO()
    requests = io.BytesIO()
    write_frame(requests, REVIEW, body)
    requests.seek(0)
    _serve(requests, answers, len(body), answer_to)
    answers.seek(0)
    return read_frame(answers, 10 * len(body))


def test_a_review_of_more_objects_than_a_batch_is_refused_as_too_large() -> None:
    body = review_text([shadow(index) for index in range(MAX_OBJECTS + 1)])

    assert worker_frame(body) == (
        TOO_LARGE,
        b"the review holds 1001 objects; at most 1000 are converted at once",
    )


def test_an_object_larger_than_a_shadow_can_be_is_refused_as_too_large() -> None:
    body = review_text([shadow(0), shadow(1, padding=MAX_OBJECT_BYTES)])

    with pytest.raises(ReviewTooLargeError, match=r"^objects\[1\] is \d+ bytes; a shadow is at"):
        answer_to(body)


@pytest.mark.parametrize("depth", [900, 100_000])
def test_nesting_deeper_than_a_shadow_is_a_bad_review_at_any_depth(depth: int) -> None:
    frame = worker_frame(nested_review_text(depth))

    assert frame == (
        BAD_REVIEW,
        f"the review is nested deeper than a shadow can be ({MAX_OBJECT_DEPTH} levels)".encode(),
    )


def test_nesting_up_to_the_bound_is_converted() -> None:
    # The object's own level and `extra` take two of the bound's levels.
    body = nested_review_text(MAX_OBJECT_DEPTH - 2)

    answer = json.loads(answer_to(body))

    assert answer["response"]["result"] == {"status": "Success"}


def test_a_full_batch_of_shadows_of_the_largest_size_is_converted() -> None:
    size = len(json.dumps(shadow(0), separators=(",", ":")))
    objects = [shadow(index, padding=MAX_OBJECT_BYTES - size - 20) for index in range(3)]
    objects += [shadow(index) for index in range(3, MAX_OBJECTS)]

    answer = json.loads(answer_to(review_text(objects)))

    assert answer["response"]["result"] == {"status": "Success"}
    assert len(answer["response"]["convertedObjects"]) == MAX_OBJECTS


def test_a_body_that_is_not_json_is_a_bad_review() -> None:
    with pytest.raises(BadReviewError, match=r"^the body is not valid JSON$"):
        answer_to(b'{"request": ')
