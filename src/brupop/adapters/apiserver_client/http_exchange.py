"""One HTTP/1.1 request and its answer on an open socket: the part of HTTP the agent uses.

The agent asks its own apiserver for small JSON documents, so it needs requests with a body of
known length and answers framed by Content-Length, chunks, or the connection's end. The standard
library's `http.client` does that and more, but importing it (and the e-mail parser it reads
headers with) costs about 20 ms of CPU at every agent start, two seconds under `cpu: 10m`.
Every line, header and body is bounded.
"""

from __future__ import annotations

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import BinaryIO


MAX_LINE_BYTES = 8 * 1024
MAX_HEADERS = 100
_NO_BODY_STATUSES = (204, 304)
_HEX_DIGITS = "0123456789abcdefABCDEF"


class BadAnswerError(Exception):
    """The server's bytes are not an HTTP/1.1 answer (or the connection ended within one)."""


class AnswerTooLargeError(Exception):
    """The answer's body is longer than the caller allows."""


def request_bytes(
    method: str, target: str, host: str, headers: dict[str, str], body: bytes | None
) -> bytes:
    """The request's head and body as sent: a Content-Length whenever a body may follow."""
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}", "Accept-Encoding: identity"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if body is not None or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body or b'')}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + (body or b"")


def read_answer(reader: BinaryIO, max_bytes: int) -> tuple[int, bytes, bool]:
    """The status, the body and whether the connection may carry another request."""
    status, version = _status_line(reader)
    while 100 <= status < 200:  # an interim answer: its headers, then the real one
        _headers(reader)
        status, version = _status_line(reader)
    headers = _headers(reader)
    keep = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
    if status in _NO_BODY_STATUSES:
        return status, b"", keep
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return status, _chunked(reader, max_bytes), keep
    length = headers.get("content-length")
    if length is None:
        return status, _bounded(reader.read(max_bytes + 1), max_bytes), False
    return status, _exactly(reader, _length(length), max_bytes), keep


def _line(reader: BinaryIO) -> bytes:
    line = reader.readline(MAX_LINE_BYTES + 1)
    if len(line) > MAX_LINE_BYTES:
        raise BadAnswerError("a line of the answer is too long")
    if not line:
        raise BadAnswerError("the server closed the connection without an answer")
    return line


def _status_line(reader: BinaryIO) -> tuple[int, str]:
    parts = _line(reader).decode("latin-1").rstrip("\r\n").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise BadAnswerError("the answer does not start with an HTTP/1.x status line")
    code = parts[1]
    if not (len(code) == 3 and code.isascii() and code.isdigit()):
        raise BadAnswerError("the answer's status is not three digits")
    return int(code), parts[0]


def _headers(reader: BinaryIO) -> dict[str, str]:
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        line = _line(reader)
        if line in (b"\r\n", b"\n"):
            return headers
        name, colon, value = line.decode("latin-1").partition(":")
        if not colon:
            raise BadAnswerError("a header line of the answer has no colon")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    raise BadAnswerError(f"the answer has more than {MAX_HEADERS} headers")


def _length(text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise BadAnswerError("the answer's Content-Length is not a number")
    return int(text)


def _bounded(data: bytes, max_bytes: int) -> bytes:
    if len(data) > max_bytes:
        raise AnswerTooLargeError(f"the answer is longer than {max_bytes} bytes")
    return data


def _exactly(reader: BinaryIO, length: int, max_bytes: int) -> bytes:
    if length > max_bytes:
        raise AnswerTooLargeError(f"the answer is longer than {max_bytes} bytes")
    data = reader.read(length)
    if len(data) < length:
        raise BadAnswerError("the connection ended within the answer's body")
    return data


def _chunked(reader: BinaryIO, max_bytes: int) -> bytes:
    body = bytearray()
    while True:
        size_text = _line(reader).split(b";", 1)[0].strip().decode("latin-1")
        if not size_text or size_text.strip(_HEX_DIGITS):
            raise BadAnswerError("a chunk of the answer has no valid size")
        size = int(size_text, 16)
        if size == 0:
            _headers(reader)  # trailers, up to the empty line
            return bytes(body)
        if len(body) + size > max_bytes:
            raise AnswerTooLargeError(f"the answer is longer than {max_bytes} bytes")
        chunk = reader.read(size)
        if len(chunk) < size or _line(reader) not in (b"\r\n", b"\n"):
            raise BadAnswerError("the connection ended within a chunk of the answer")
        body += chunk
