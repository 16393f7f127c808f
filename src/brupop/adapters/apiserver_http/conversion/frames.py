"""The frames the apiserver and its conversion worker exchange over a pipe pair.

A frame is one kind byte, the payload's length (8 bytes, big-endian) and the payload. Both
sides bound the payloads they accept, so a confused peer cannot make the other allocate without
limit.
"""

from __future__ import annotations

import struct
from typing import BinaryIO

HEADER = struct.Struct("!cQ")

READY = b"S"  # worker -> server, once its imports are done: empty payload
REVIEW = b"R"  # server -> worker: a ConversionReview's JSON, as received
ANSWER = b"A"  # worker -> server: the answering ConversionReview's JSON
BAD_REVIEW = b"B"  # worker -> server: not JSON, or nested too deep (400); the payload says why
TOO_LARGE = (
    b"L"  # worker -> server: objects larger or more than shadows (413); the payload says why
)
FAILED = b"F"  # worker -> server: converting raised; the payload names the exception's type
KINDS = frozenset({READY, REVIEW, ANSWER, BAD_REVIEW, TOO_LARGE, FAILED})


class FrameError(ValueError):
    """A frame that breaks the protocol: an unknown kind or a payload over the bound."""


def header(kind: bytes, length: int) -> bytes:
    """The header announcing a payload of `length` bytes."""
    return HEADER.pack(kind, length)


def write_frame(stream: BinaryIO, kind: bytes, payload: bytes) -> None:
    """Write one frame to a blocking stream and flush it."""
    stream.write(header(kind, len(payload)))
    stream.write(payload)
    stream.flush()


def read_frame(stream: BinaryIO, limit: int) -> tuple[bytes, bytes] | None:
    """The next frame of a blocking stream; None when it ends between frames."""
    head = _read_exactly(stream, HEADER.size)
    if head is None:
        return None
    kind, length = _checked(head, limit)
    payload = _read_exactly(stream, length)
    if payload is None:
        raise FrameError("the stream ended inside a frame")
    return kind, payload


class FrameReader:
    """Assembles one frame from chunks as they arrive (for a non-blocking reader)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._head = bytearray()
        self._kind = b""
        self._payload: bytearray | None = None
        self._filled = 0

    def wanted(self) -> int:
        """How many bytes the frame still needs."""
        if self._payload is None:
            return HEADER.size - len(self._head)
        return len(self._payload) - self._filled

    def feed(self, data: bytes) -> None:
        """Add at most `wanted()` bytes."""
        if self._payload is None:
            self._head += data
            if len(self._head) == HEADER.size:
                self._kind, length = _checked(bytes(self._head), self._limit)
                self._payload = bytearray(length)
            return
        self._payload[self._filled : self._filled + len(data)] = data
        self._filled += len(data)

    def frame(self) -> tuple[bytes, bytes] | None:
        """The frame once complete, else None."""
        if self._payload is None or self._filled < len(self._payload):
            return None
        return self._kind, bytes(self._payload)


def _checked(head: bytes, limit: int) -> tuple[bytes, int]:
    kind, length = HEADER.unpack(head)
    if kind not in KINDS:
        raise FrameError(f"unknown frame kind {kind!r}")
    if length > limit:
        raise FrameError(f"a frame of {length} bytes is over the bound of {limit}")
    return kind, length


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = stream.read(left)
        if not chunk:
            if left == size:
                return None
            raise FrameError("the stream ended inside a frame")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
