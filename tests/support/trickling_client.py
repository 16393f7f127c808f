"""A client that sends its bytes one at a time, to see how long a server lets it go on."""

from __future__ import annotations

import select
import socket
import ssl


def trickle_until_closed(
    connection: socket.socket, data: bytes, seconds_per_byte: float = 0.05
) -> tuple[bytes, int]:
    """Send `data` a byte every `seconds_per_byte` until the server closes the connection:
    what the server sent meanwhile, and how many bytes went (`len(data)`: never closed)."""
    answer = b""
    for sent in range(len(data)):
        readable, _, _ = select.select([connection], [], [], seconds_per_byte)
        if readable:
            try:
                chunk = connection.recv(65536)
            except (ConnectionResetError, ssl.SSLError):
                return answer, sent
            if not chunk:
                return answer, sent
            answer += chunk
        try:
            connection.sendall(data[sent : sent + 1])
        except OSError:
            return answer, sent
    return answer, len(data)
