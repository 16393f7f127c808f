"""The conversion worker's side: its answer is `convert_review`'s, and its frames are bounded."""

from __future__ import annotations

import copy
import io
import json
from typing import Any

import pytest

from brupop.adapters.apiserver_http.conversion.answer import answer_to
from brupop.adapters.apiserver_http.conversion.frames import (
    ANSWER,
    BAD_REVIEW,
    FAILED,
    REVIEW,
    FrameError,
    FrameReader,
    header,
    read_frame,
    write_frame,
)
from brupop.adapters.apiserver_http.conversion.worker import _serve, main
from brupop.domain.conversion import convert_review


def shadow_v2(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "brupop.bottlerocket.aws/v2",
        "kind": "BottlerocketShadow",
        "metadata": {"name": name, "namespace": "ns", "labels": {"a": "é"}},
        "spec": {"state": "Idle", "version": "1.2.3"},
        "status": {
            "current_version": "1.2.3",
            "target_version": "1.2.3",
            "current_state": "ErrorReset",
            "crash_count": 2,
        },
    }


@pytest.mark.parametrize(
    "review",
    [
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {
                "uid": "u1",
                "desiredAPIVersion": "brupop.bottlerocket.aws/v1",
                "objects": [shadow_v2("brs-a"), shadow_v2("brs-b"), shadow_v2("brs-c")],
            },
        },
        {"request": {"uid": "u2", "desiredAPIVersion": "x/v9", "objects": [shadow_v2("a")]}},
        {"request": {"uid": "u3"}},
        [],
    ],
)
def test_the_answer_written_object_by_object_is_the_conversion_of_the_review(
    review: Any,
) -> None:
    answer = json.loads(answer_to(json.dumps(review).encode()))

    assert answer == convert_review(copy.deepcopy(review))


def frames(*pairs: tuple[bytes, bytes]) -> io.BytesIO:
    stream = io.BytesIO()
    for kind, payload in pairs:
        write_frame(stream, kind, payload)
    stream.seek(0)
    return stream


def test_the_worker_answers_each_review_in_turn_and_ends_with_its_input() -> None:
    review = json.dumps({"request": {"uid": "u", "desiredAPIVersion": "x/v9", "objects": []}})
    answers = io.BytesIO()

    code = _serve(
        frames((REVIEW, review.encode()), (REVIEW, b"{not json")), answers, 1000, answer_to
    )

    answers.seek(0)
    first, second = read_frame(answers, 1000), read_frame(answers, 1000)
    assert code == 0 and read_frame(answers, 1000) is None
    assert first is not None and first[0] == ANSWER
    assert json.loads(first[1])["response"]["uid"] == "u"
    assert second == (BAD_REVIEW, b"the body is not valid JSON")


def test_a_review_over_the_bound_breaks_the_protocol() -> None:
    with pytest.raises(FrameError, match="over the bound"):
        _serve(frames((REVIEW, b"x" * 101)), io.BytesIO(), 100, answer_to)


def test_a_failure_while_converting_is_a_failure_frame_naming_the_error() -> None:
    def out_of_memory(_body: bytes) -> bytes:
        raise MemoryError

    answers = io.BytesIO()

    _serve(frames((REVIEW, b"{}")), answers, 100, out_of_memory)

    answers.seek(0)
    assert read_frame(answers, 100) == (FAILED, b"MemoryError")


def test_a_frame_reader_refuses_a_payload_over_its_bound_before_allocating_it() -> None:
    reader = FrameReader(limit=10)

    with pytest.raises(FrameError, match="over the bound"):
        reader.feed(header(ANSWER, 2**40))


def test_a_frame_reader_assembles_a_frame_from_pieces() -> None:
    data = header(ANSWER, 5) + b"hello"
    reader = FrameReader(limit=10)
    for index in range(len(data)):
        assert reader.frame() is None
        reader.feed(data[index : index + 1])

    assert reader.frame() == (ANSWER, b"hello")


def test_the_worker_refuses_a_missing_bound_with_its_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 2
    assert "usage:" in capsys.readouterr().err
