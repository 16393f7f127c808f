"""What an ASGI app sends, collected: a `send` that keeps every message, and the status read
from them."""

from __future__ import annotations

from starlette.types import Message, Send


def sender(messages: list[Message]) -> Send:
    """A `send` that appends each message to `messages`."""

    async def send(message: Message) -> None:
        messages.append(message)

    return send


def status_of(messages: list[Message]) -> int | None:
    """The response's status code, or None if the app never started a response."""
    starts = [m["status"] for m in messages if m["type"] == "http.response.start"]
    return starts[0] if starts else None
