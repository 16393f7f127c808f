"""Reading one HTTP/1.1 answer off an asyncio stream, for the benches' simulated agents."""

from __future__ import annotations

import asyncio


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One HTTP/1.1 response with a Content-Length body: its status and body."""
    status, _, body = await read_answer_and_headers(reader)
    return status, body


async def read_answer_and_headers(
    reader: asyncio.StreamReader,
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response with a Content-Length body: its status, headers (names in lower
    case) and body."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    return status, headers, await reader.readexactly(length) if length else b""
