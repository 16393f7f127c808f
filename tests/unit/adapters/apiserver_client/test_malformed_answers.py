"""Whatever the apiserver answers, the agent's client returns what it asked for or raises a
port error, quickly: arbitrary bytes, arbitrary JSON, deep nesting, wrong types, huge bodies."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brupop.adapters.apiserver_client.answers import error_text, json_object
from brupop.adapters.apiserver_client.client import ApiserverClient
from brupop.adapters.apiserver_client.transport import MAX_RESPONSE_BYTES, Reply
from brupop.domain.host.agent_shadow import AgentShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import DrainFailedError, PortError, UnavailableError

if TYPE_CHECKING:  # a protocol for the type checker only
    from brupop.adapters.apiserver_client.client import ApiserverTransport

# CPU seconds the calling thread may spend on one answer: its own time, which load does not
# stretch (a wall-clock bound failed on a busy machine though the reading was as fast).
CPU_SECONDS_PER_ANSWER = 2.0
STATUSES = (200, 201, 400, 401, 403, 404, 409, 413, 422)
UID = b'{"node_uid": "uid-1"}'

SHADOW: dict[str, Any] = {
    "apiVersion": "brupop.bottlerocket.aws/v2",
    "kind": "BottlerocketShadow",
    "metadata": {
        "name": "brs-n1",
        "namespace": "brupop-bottlerocket-aws",
        "resourceVersion": "7",
        "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "uid-1"}],
    },
    "spec": {"state": "Idle", "version": "1.20.0"},
    "status": {"current_version": "1.19.0", "target_version": "1.20.0", "current_state": "Idle"},
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


def _deep(depth: int, opener: bytes, closer: bytes) -> bytes:
    return opener * depth + b"1" + closer * depth


def _with(path: tuple[str, ...], value: Any) -> bytes:
    """The good shadow with the value at `path` replaced."""
    document = json.loads(json.dumps(SHADOW))
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(document).encode()


PATHS = (
    ("metadata",),
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("metadata", "resourceVersion"),
    ("metadata", "ownerReferences"),
    ("spec",),
    ("spec", "state"),
    ("spec", "version"),
    ("spec", "state_transition_timestamp"),
    ("status",),
    ("status", "current_version"),
    ("status", "crash_count"),
    ("status", "state_transition_failure_timestamp"),
)

bodies = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.builds(_with, st.sampled_from(PATHS), json_values),
    st.builds(_deep, st.integers(1, 200_000), st.sampled_from((b"[", b'{"a":')), st.just(b"")),
    st.builds(_deep, st.integers(1, 200_000), st.just(b"["), st.just(b"]")),
    st.builds(
        _with,
        st.sampled_from(PATHS),
        st.integers(1, 500).map(lambda d: json.loads(_deep(d, b"[", b"]"))),
    ),
    st.just(b"[" + b"0," * (MAX_RESPONSE_BYTES // 2 - 1) + b"0]"),
    st.just(b'{"error": "' + b"x" * (MAX_RESPONSE_BYTES - 20) + b'"}'),
)


class ScriptedTransport:
    """Answers the node-uid route with a good UID and every other call with one reply."""

    def __init__(self, reply: Reply) -> None:
        self._reply = reply

    def call(
        self,
        method: str,
        path: str,
        *,
        read_seconds: float,
        node_uid: str | None = None,
        body: Any = None,
        query: Mapping[str, str] | None = None,
    ) -> Reply:
        if path.endswith("/node-uid"):
            return Reply(200, UID)
        return self._reply

    def close(self) -> None:
        return None


def _client(transport: ApiserverTransport) -> ApiserverClient:
    return ApiserverClient(
        base_url="https://127.0.0.1:1",
        node_name="n1",
        token_path=Path("unused"),
        ca_path=Path("unused"),
        timeout_seconds=1.0,
        drain_timeout_seconds=1.0,
        transport=transport,
    )


STATUS = AgentShadowStatus(
    current_version="1.19.0", target_version="1.20.0", current_state=UpdateState.IDLE
)
OPERATIONS: dict[str, Callable[[ApiserverClient], object]] = {
    "get": lambda c: c.get(),
    "wait_for_change": lambda c: c.wait_for_change("6", 0.0),
    "create": lambda c: c.create(),
    "update_status": lambda c: c.update_status(STATUS),
    "cordon_and_drain": lambda c: c.cordon_and_drain(),
    "uncordon": lambda c: c.uncordon(),
    "exclude_from_load_balancers": lambda c: c.exclude_from_load_balancers(),
}


def _only_port_errors(call: Callable[[], object]) -> None:
    started = time.thread_time()
    with contextlib.suppress(PortError):
        call()
    assert time.thread_time() - started < CPU_SECONDS_PER_ANSWER


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    operation=st.sampled_from(sorted(OPERATIONS)),
    status=st.sampled_from(STATUSES),
    body=bodies,
)
def test_any_answer_to_any_call_is_its_result_or_a_port_error(
    operation: str, status: int, body: bytes
) -> None:
    client = _client(ScriptedTransport(Reply(status, body)))
    _only_port_errors(lambda: OPERATIONS[operation](client))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=bodies)
def test_any_answer_to_the_node_uid_question_is_a_uid_or_a_port_error(body: bytes) -> None:
    class UidAnswer(ScriptedTransport):
        def call(self, method: str, path: str, **_: Any) -> Reply:
            return Reply(200, body)

    _only_port_errors(lambda: _client(UidAnswer(Reply(200, body))).node_uid())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(status=st.integers(100, 599), body=bodies)
def test_an_error_answer_is_always_said_in_a_few_hundred_characters(
    status: int, body: bytes
) -> None:
    started = time.thread_time()
    text = error_text(status, body)
    assert time.thread_time() - started < CPU_SECONDS_PER_ANSWER
    assert 0 < len(text) <= 300


def test_deep_json_is_an_answer_brupop_cannot_read_not_a_recursion_error() -> None:
    client = _client(ScriptedTransport(Reply(200, _deep(100_000, b"[", b"]"))))
    _only_port_errors(client.get)


def test_a_refused_drain_answered_with_a_list_is_a_drain_failure_naming_no_blockers() -> None:
    client = _client(ScriptedTransport(Reply(409, b'["not", "an", "object"]')))
    with pytest.raises(DrainFailedError) as refused:
        client.cordon_and_drain()
    assert refused.value.blockers == ()


def test_a_list_where_an_object_belongs_is_a_port_error_not_an_attribute_error() -> None:
    with pytest.raises(UnavailableError):
        json_object(b'["not", "an", "object"]')
