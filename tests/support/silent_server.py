"""Loopback servers that hold a client: one accepts and never answers (a black hole), one
drips its headers a byte at a time. Both stop within a bounded time, so a broken test ends."""

from __future__ import annotations

import socket
import threading
from types import TracebackType

HOLD_MAX_SECONDS = 30.0


class SilentServer:
    """`with SilentServer(drip=False) as server:` accepts on `server.url` and never answers;
    with `drip`, it sends a status line and then one header byte every `drip_seconds`."""

    def __init__(self, *, drip: bool = False, drip_seconds: float = 0.2) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._drip, self._drip_seconds = drip, drip_seconds
        self._stop = threading.Event()
        self._held: list[socket.socket] = []
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> SilentServer:
        self._listener.settimeout(0.1)
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(5)
        for held in self._held:
            held.close()
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            self._held.append(client)
            if self._drip:
                threading.Thread(target=self._dribble, args=(client,), daemon=True).start()

    def _dribble(self, client: socket.socket) -> None:
        try:
            client.sendall(b"HTTP/1.1 200 OK\r\n")
            for _ in range(int(HOLD_MAX_SECONDS / self._drip_seconds)):
                if self._stop.wait(self._drip_seconds):
                    return
                client.sendall(b"X")
        except OSError:
            return
