"""The agent waits out a 429's or 503's `Retry-After` (seconds, believed up to 60), with jitter on
top, before asking again; any other value, or any other answer, leaves the policy's own backoff.
Scripted answers stand in for the connections and a list for the clock's sleep: nothing waits."""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from brupop.adapters.apiserver_client import transport as transport_module
from brupop.adapters.apiserver_client.http_exchange import read_answer
from brupop.adapters.apiserver_client.transport import HttpsTransport, Reply, RetryPolicy
from brupop.ports.errors import TooManyRequestsError, UnavailableError

POLICY = RetryPolicy()  # the agent's: 5 retries, full jitter below 0.1 s doubled per failure
BUSY = b'{"error":"too many token reviews in progress; retry"}'


def test_the_wait_is_at_least_what_the_server_asked_and_at_most_twice_that() -> None:
    assert POLICY.delay(0, lambda: 0.0, "5") == 5.0
    assert POLICY.delay(0, lambda: 0.5, "5") == 7.5
    assert 9.99 < POLICY.delay(0, lambda: 0.999, "5") < 10.0


def test_the_jitter_on_top_is_never_narrower_than_the_policys_own() -> None:
    # After 7 failures the policy's own ceiling is 6.4 s, wider than the 1 s asked.
    assert POLICY.delay(6, lambda: 0.5, "1") == pytest.approx(1.0 + 0.5 * 6.4)
    # "Come back now" still spreads the retries as the policy does.
    assert POLICY.delay(0, lambda: 0.5, "0") == pytest.approx(0.05)


def test_the_longest_wait_believed_is_the_policys() -> None:
    assert POLICY.delay(0, lambda: 0.0, " 60 ") == 60.0
    assert RetryPolicy(longest_retry_after_seconds=10).delay(0, lambda: 0.5, "11") == 0.05


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "61",
        "86400",
        "9" * 5000,  # int() of more than 4,300 digits raises; it must not reach it
        "-1",
        "1.5",
        "²",
        "५",  # a Devanagari five: a digit to str.isdigit, not to HTTP
        "Wed, 21 Oct 2015 07:28:00 GMT",
        "5 seconds",
    ],
)
def test_a_bad_or_huge_retry_after_leaves_the_policys_own_backoff(value: str | None) -> None:
    for attempt in range(POLICY.retries):
        assert POLICY.delay(attempt, lambda: 0.5, value) == POLICY.delay(attempt, lambda: 0.5)


def test_the_answer_reader_hands_the_retry_after_on_as_sent() -> None:
    answer = b"HTTP/1.1 503 x\r\nRetry-After: 5\r\nContent-Length: 2\r\n\r\n{}"

    assert read_answer(io.BytesIO(answer), 1024) == (503, b"{}", True, "5")
    assert read_answer(io.BytesIO(b"HTTP/1.1 204 x\r\n\r\n"), 1024)[3] is None


class ScriptedConnections:
    """Stands in for ApiserverConnections: each exchange gets the next scripted answer."""

    script: list[tuple[int, bytes, str | None]] = []

    def __init__(self, *_: Any, **__: Any) -> None:
        self.path_prefix = ""
        self._answers: Iterator[tuple[int, bytes, str | None]] = iter(self.script)

    def exchange(self, *_: Any, **__: Any) -> tuple[int, bytes, str | None]:
        return next(self._answers)

    def drop_all(self) -> None:
        """Nothing to close."""


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    monkeypatch.setattr(transport_module, "ApiserverConnections", ScriptedConnections)
    return []


def call_with(
    answers: Sequence[tuple[int, bytes, str | None]], sleeps: list[float], tmp_path: Path
) -> Reply:
    """Run one GET through a transport whose connections answer `answers` in turn."""
    ScriptedConnections.script = list(answers)
    token = tmp_path / "token"
    token.write_text("a-token")
    transport = HttpsTransport(
        base_url="https://apiserver:8443",
        node_name="n1",
        token_path=token,
        ca_path=tmp_path / "ca.pem",
        retry=POLICY,
        sleep=sleeps.append,
        draw=lambda: 0.5,
    )
    return transport.call("GET", "/bottlerocket-node-resource", read_seconds=1.0)


def test_503s_that_say_5_seconds_are_retried_after_5_to_10_seconds(
    sleeps: list[float], tmp_path: Path
) -> None:
    answers = [(503, BUSY, "5")] * 3 + [(200, b"{}", None)]

    reply = call_with(answers, sleeps, tmp_path)

    assert reply.status == 200
    assert sleeps == [7.5, 7.5, 7.5]


def test_429s_are_waited_out_as_asked_until_the_retries_are_spent(
    sleeps: list[float], tmp_path: Path
) -> None:
    with pytest.raises(TooManyRequestsError):
        call_with([(429, BUSY, "2")] * (POLICY.retries + 1), sleeps, tmp_path)

    assert sleeps == [3.0] * POLICY.retries


def test_another_5xx_or_an_unreadable_retry_after_gets_the_policys_backoff(
    sleeps: list[float], tmp_path: Path
) -> None:
    answers: list[tuple[int, bytes, str | None]] = [(500, b"", "5"), (502, b"", "5")]
    answers += [(503, BUSY, "soon"), (503, BUSY, "999999")]
    answers += [(503, BUSY, None), (503, BUSY, "5")]
    with pytest.raises(UnavailableError):
        call_with(answers, sleeps, tmp_path)

    own = [POLICY.delay(attempt, lambda: 0.5) for attempt in range(POLICY.retries)]
    assert sleeps == own
    assert sleeps == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.8])


def test_a_refusal_that_retrying_cannot_change_is_answered_at_once(
    sleeps: list[float], tmp_path: Path
) -> None:
    reply = call_with([(403, b'{"error":"no"}', "5")], sleeps, tmp_path)

    assert reply.status == 403
    assert sleeps == []
