"""Any body Prometheus (or what stands in its place) may send is either firing alerts or an
UnreadableAnswer with a short reason free of controls: never another exception, and quickly."""

from __future__ import annotations

import json
import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.adapters.http.prometheus_answer import (
    UnreadableAnswer,
    error_clause,
    firing_alerts,
)
from tests.support.odd_json import deep_json, json_values, nested, raw_bytes

CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# The reader's own CPU time (this thread's, so other processes' load does not count): a
# pathological input (quadratic parsing, a megabyte of nesting) costs far more than this.
READ_CPU_SECONDS_MAX = 1.0


def _shaped(data: object) -> bytes:
    """An answer with Prometheus's outline around arbitrary values."""
    return json.dumps({"status": "success", "data": data}).encode()


answers = st.one_of(
    json_values.map(lambda value: json.dumps(value).encode()),
    json_values.map(_shaped),
    st.fixed_dictionaries({"result": json_values}).map(_shaped),
    st.lists(st.fixed_dictionaries({"metric": json_values}), max_size=4).map(
        lambda result: _shaped({"result": result})
    ),
    json_values.map(lambda value: json.dumps({"status": "error", "error": value}).encode()),
    deep_json,
    raw_bytes,
)


@settings(max_examples=400, deadline=None)  # a wall-clock deadline fails under load
@given(answers)
def test_any_answer_gives_alerts_or_an_unreadable_answer(body: bytes) -> None:
    started = time.thread_time()
    try:
        alerts = firing_alerts(body)
    except UnreadableAnswer as error:
        assert CONTROLS.search(str(error)) is None and len(str(error)) < 200
    else:
        assert all(isinstance(alert.name, str) for alert in alerts)
    clause = error_clause(body)
    assert CONTROLS.search(clause) is None and len(clause) < 200
    assert time.thread_time() - started < READ_CPU_SECONDS_MAX


def test_a_megabyte_of_nesting_is_refused_quickly() -> None:
    body = nested(512 * 1024, "{")
    started = time.thread_time()

    try:
        firing_alerts(body)
    except UnreadableAnswer as error:
        assert str(error) == "the answer is not JSON"
    else:
        raise AssertionError("nesting this deep is not an answer")
    assert time.thread_time() - started < READ_CPU_SECONDS_MAX
