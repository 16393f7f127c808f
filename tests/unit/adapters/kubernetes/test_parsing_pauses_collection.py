"""ApiCalls parses an answer with the cyclic garbage collector paused (a collection mid-parse
would move the answer into the old generations, whose collections walk the whole mirror), and
leaves the collector as it found it, refused answers included."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes.client import ApiClient

from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.ports.errors import UnavailableError


@pytest.fixture
def api_calls() -> Iterator[ApiCalls]:
    calls = ApiCalls(ApiClient())
    yield calls
    calls.api_client.close()


def _answering(data: bytes) -> Any:
    return lambda **_options: SimpleNamespace(data=data)


def test_an_answer_is_parsed_with_the_collector_paused_and_it_runs_again_after(
    api_calls: ApiCalls, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    parse = json.loads

    def loads(data: bytes) -> Any:
        seen.append(gc.isenabled())
        return parse(data)

    monkeypatch.setattr(json, "loads", loads)

    assert api_calls.json("list nodes", _answering(b'{"items": []}')) == {"items": []}
    assert seen == [False]
    assert gc.isenabled()


def test_a_refused_answer_leaves_the_collector_running(api_calls: ApiCalls) -> None:
    with pytest.raises(UnavailableError, match="other than JSON"):
        api_calls.json("list nodes", _answering(b"<html>"))
    assert gc.isenabled()


def test_a_collector_the_process_turned_off_stays_off(api_calls: ApiCalls) -> None:
    gc.disable()
    try:
        api_calls.json("list nodes", _answering(b"{}"))
        assert not gc.isenabled()
    finally:
        gc.enable()
