"""Conversion by size: a review of one shadow is converted in the apiserver's own process and
starts no worker; a larger one starts the worker process and is converted there; a small body
that is not a review is refused as the worker refuses it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from brupop.adapters.apiserver_http.conversion.by_size import ConversionBySize
from brupop.adapters.apiserver_http.conversion.review_bounds import SMALL_REVIEW_BYTES
from brupop.adapters.apiserver_http.conversion.worker_process import (
    ConversionFailedError,
    ConversionOptions,
    ConversionWorker,
)
from brupop.domain.conversion import convert_review


def review(objects: int, padding: int = 0) -> dict[str, Any]:
    shadow = {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketShadow",
        "metadata": {"name": "brs-a", "namespace": "ns", "annotations": {"x": "é" * padding}},
        "spec": {"state": "StagedUpdate", "version": "1.2.3"},
        "status": {"current_version": "1.2.2", "target_version": "1.2.3", "current_state": "Idle"},
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "u1",
            "desiredAPIVersion": "brupop.bottlerocket.aws/v2",
            "objects": [shadow] * objects,
        },
    }


@pytest.fixture
def conversion() -> Iterator[ConversionBySize]:
    # Generous bounds: the worker starts under whatever load the machine has.
    converter = ConversionBySize(
        ConversionWorker(ConversionOptions(seconds=120, start_seconds=120))
    )
    converter.start()
    yield converter
    converter.stop()


def test_a_one_shadow_review_is_converted_here_and_starts_no_worker(
    conversion: ConversionBySize,
) -> None:
    body = json.dumps(review(1)).encode()
    assert json.loads(conversion.convert(body)) == convert_review(review(1))
    assert conversion.pid is None


def test_a_review_larger_than_a_shadow_starts_the_worker_which_converts_it(
    conversion: ConversionBySize,
) -> None:
    large = review(40, padding=1000)
    body = json.dumps(large).encode()
    assert len(body) > SMALL_REVIEW_BYTES
    assert json.loads(conversion.convert(body)) == convert_review(large)
    assert conversion.pid is not None


def test_a_small_body_that_is_not_json_is_refused_with_a_400(conversion: ConversionBySize) -> None:
    with pytest.raises(ConversionFailedError) as refused:
        conversion.convert(b"{not json")
    assert (refused.value.status, str(refused.value)) == (400, "the body is not valid JSON")
    assert conversion.pid is None
