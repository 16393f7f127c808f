"""The agent's HTTP/1.1: requests framed as the apiserver expects, answers read within bounds,
and any bytes a server sends are an answer or a BadAnswerError, never another exception."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brupop.adapters.apiserver_client.http_exchange import (
    MAX_HEADERS,
    MAX_LINE_BYTES,
    AnswerTooLargeError,
    BadAnswerError,
    read_answer,
    request_bytes,
)

LIMIT = 1024


def _read(data: bytes, limit: int = LIMIT) -> tuple[int, bytes, bool]:
    return read_answer(io.BytesIO(data), limit)


def test_a_put_carries_its_body_with_its_length_and_the_host() -> None:
    sent = request_bytes("PUT", "/r?view=shadow", "apiserver:8443", {"A": "b"}, b'{"x":1}')

    head, _, body = sent.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "PUT /r?view=shadow HTTP/1.1"
    assert {"Host: apiserver:8443", "A: b", "Content-Length: 7"} <= set(lines)
    assert body == b'{"x":1}'


def test_a_post_without_a_body_says_its_length_is_zero_and_a_get_says_nothing() -> None:
    assert b"Content-Length: 0\r\n" in request_bytes("POST", "/r/uncordon", "h", {}, None)
    assert b"Content-Length" not in request_bytes("GET", "/r", "h", {}, None)


def test_an_answer_with_a_length_is_read_and_the_connection_kept() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-type: x\r\n\r\n{}"

    assert _read(answer) == (200, b"{}", True)


def test_a_connection_the_server_closes_is_not_kept() -> None:
    assert _read(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")[2] is False
    assert _read(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")[2] is False


def test_a_chunked_answer_is_joined_and_its_trailers_read() -> None:
    answer = b"HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n"
    answer += b"3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: t\r\n\r\n"

    assert _read(answer) == (409, b"abcde", True)


def test_an_answer_without_a_length_runs_to_the_end_and_ends_the_connection() -> None:
    assert _read(b"HTTP/1.1 200 OK\r\n\r\nall of it") == (200, b"all of it", False)


def test_an_interim_answer_is_skipped_and_no_content_has_no_body() -> None:
    answer = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"

    assert _read(answer) == (204, b"", True)


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 1025\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n401\r\n" + b"x" * 1025,
        b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 1025,
    ],
    ids=["length", "chunked", "to-the-end"],
)
def test_a_body_longer_than_the_limit_is_refused(answer: bytes) -> None:
    with pytest.raises(AnswerTooLargeError):
        _read(answer)


@pytest.mark.parametrize(
    "answer",
    [
        b"",
        b"SSH-2.0-OpenSSH\r\n\r\n",
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
        b"HTTP/1.1 200 OK\r\nX: " + b"y" * MAX_LINE_BYTES + b"\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * (MAX_HEADERS + 1) + b"\r\n",
    ],
    ids=[
        "nothing",
        "not-http",
        "status",
        "header",
        "length",
        "truncated",
        "chunk-size",
        "chunk-cut",
        "long-line",
        "many-headers",
    ],
)
def test_bytes_that_are_not_a_whole_answer_are_a_bad_answer(answer: bytes) -> None:
    with pytest.raises(BadAnswerError):
        _read(answer)


_HEAD = st.sampled_from([b"HTTP/1.1 200 OK\r\n", b"HTTP/1.0 404 x\r\n", b"HTTP/1.1 100 c\r\n", b""])
_LINES = st.lists(
    st.one_of(
        st.sampled_from(
            [b"Content-Length: 3\r\n", b"Transfer-Encoding: chunked\r\n", b"\r\n", b"a: b\r\n"]
        ),
        st.binary(max_size=40),
    ),
    max_size=8,
)


@given(_HEAD, _LINES)
def test_any_bytes_are_an_answer_or_a_bad_or_too_large_one(head: bytes, lines: list[bytes]) -> None:
    try:
        status, body, _ = _read(head + b"".join(lines), limit=64)
    except (BadAnswerError, AnswerTooLargeError):
        return
    assert 100 <= status <= 999 and len(body) <= 64
