"""A socket's reads bounded by one deadline for a whole message rather than a timeout for each
read: a peer that sends a byte every few seconds cannot hold the reader, or its thread, for ever.

Wrapped in `io.BufferedReader`, it reads lines and bodies as `socket.makefile("rb")` does.
"""

from __future__ import annotations

import io
import time

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    import socket
    from typing import Any


class ReadsBefore(io.RawIOBase):
    """The reads of `connection`, each waiting only for what is left until `deadline` (a
    `time.monotonic()` value, which the owner may move on for the next message)."""

    def __init__(self, connection: socket.socket, deadline: float) -> None:
        self.connection = connection
        self.deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out: the message did not come whole in time")
        self.connection.settimeout(left)
        return self.connection.recv_into(buffer)
