"""ChaosMonkey: kills agent processes at random moments, with SIGKILL or SIGTERM.

It prefers nodes that are mid-update (that is where a kill hurts), picks the signal at random
but uses both, and stops once it has delivered the number of kills asked for. It begins with
the rollout and aims at agents past their start-up, so kills land in the middle of real work.
"""

from __future__ import annotations

import random
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Kill:
    """One delivered kill."""

    node: str
    signal: signal.Signals
    at: float


class ChaosMonkey:
    """A thread delivering `kills` kills, one every 0.1 to 0.6 seconds."""

    def __init__(
        self,
        kills: int,
        ready: Callable[[], list[str]],
        active: Callable[[], list[str]],
        send: Callable[[str, signal.Signals], bool],
        elapsed: Callable[[], float],
        *,
        seed: int | None = None,
    ) -> None:
        self._wanted = kills
        self._ready = ready
        self._active = active
        self._send = send
        self._elapsed = elapsed
        self._random = random.Random(seed)
        self._gaps = (0.1, 0.6)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="chaos-monkey", daemon=True)
        self.kills: list[Kill] = []

    @property
    def done(self) -> bool:
        return len(self.kills) >= self._wanted

    def start(self) -> None:
        if self._wanted > 0:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._active() and not self._stop.wait(0.05):
            pass  # the rollout has not begun
        while not self.done and not self._stop.wait(self._random.uniform(*self._gaps)):
            sig = self._pick_signal()
            ready = self._ready()
            if not ready:
                continue
            busy = [node for node in self._active() if node in ready]
            pool = busy if busy and self._random.random() < 0.7 else ready
            node = self._random.choice(pool)
            if self._send(node, sig):
                self.kills.append(Kill(node=node, signal=sig, at=self._elapsed()))

    def _pick_signal(self) -> signal.Signals:
        sent = {kill.signal for kill in self.kills}
        for sig in (signal.SIGKILL, signal.SIGTERM):
            if sig not in sent:
                return sig
        return self._random.choice((signal.SIGKILL, signal.SIGTERM))
