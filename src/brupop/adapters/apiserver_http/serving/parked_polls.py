"""A long-poll parked at the HTTP protocol: what uvicorn's protocol sees of it, and its bytes.

While the long-poll lane (`routes/long_polls.py`) waits for a request's answer, the connection's
`cycle` is a `ParkedPoll`: to uvicorn's protocol a response is in progress, so a request sent
meanwhile waits its turn (reading paused, as for any pipelined request), the server's shutdown
asks for `Connection: close` (keep_alive) instead of closing at once, and a lost connection is
noted (disconnected). The answer is then written as uvicorn writes one, default headers first.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import STATUS_LINE

from brupop.adapters.apiserver_http.routes.long_polls import LongPollAnswer


class _NoBody:
    """The parked request's body event: the lane reads no body, so nothing waits on it."""

    __slots__ = ()

    def set(self) -> None:
        return


class ParkedPoll:
    """The attributes of uvicorn's RequestResponseCycle that its protocol reads and sets."""

    __slots__ = (
        "body",
        "disconnected",
        "keep_alive",
        "message_event",
        "more_body",
        "response_complete",
    )

    def __init__(self) -> None:
        self.keep_alive = True  # the shutdown sets False: the answer then closes
        self.disconnected = False
        self.response_complete = False
        self.more_body = False
        self.body = b""
        self.message_event = _NoBody()


def answer_bytes(
    answer: LongPollAnswer, defaults: list[tuple[bytes, bytes]], *, keep_alive: bool
) -> bytes:
    """The status line, the server's default headers, the answer's, and its body."""
    parts = [STATUS_LINE[answer.status]]
    for name, value in [*defaults, *answer.headers]:
        parts += [name, b": ", value, b"\r\n"]
    if not keep_alive:
        parts.append(b"connection: close\r\n")
    parts += [b"\r\n", answer.body]
    return b"".join(parts)
