"""Connection slots of one listener: a cap, a cap per source address, and a reserve for probes.

A listener admits `max_connections` connections, at most `per_address` of them from one source
address, so that one pod cannot take every slot. Once the listener is full, up to `probe_reserve`
more are admitted as reserve connections, at most `RESERVE_PER_ADDRESS` from one address and none
from an address already at its cap: a reserve connection is served only `/ping` and `/readyz`
(see `listeners.py`), so the kubelet's probes are answered when the agents fill the listener.

The apiserver's own host (127.0.0.1, ::1) is not counted per address: in a pod only the pod itself
connects from there, and `brupop simulate` and the benches run every agent there.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

# The kubelet's liveness and readiness probes of one pod may overlap; nothing else needs more.
RESERVE_PER_ADDRESS = 2
OWN_HOST = frozenset({"127.0.0.1", "::1"})


@dataclass(frozen=True)
class ListenerLimits:
    """How many connections one listener admits, per address, and beyond its cap for probes."""

    max_connections: int = 4096
    per_address: int = 64
    probe_reserve: int = 16


class Slot:
    """One admitted connection's place; `release` gives it back (once, however often called)."""

    __slots__ = ("_address", "_released", "_slots", "reserved")

    def __init__(self, slots: ListenerSlots, address: str, *, reserved: bool) -> None:
        self._slots = slots
        self._address = address
        self._released = False
        self.reserved = reserved

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._slots._give_back(self._address, reserved=self.reserved)


class ListenerSlots:
    """Counts one listener's connections, in all and per address (one event loop: no lock)."""

    def __init__(self, limits: ListenerLimits) -> None:
        self.limits = limits
        self._regular = 0
        self._reserve = 0
        self._by_address: Counter[str] = Counter()
        self._reserve_by_address: Counter[str] = Counter()

    @property
    def open(self) -> int:
        """Connections holding a slot, reserve included."""
        return self._regular + self._reserve

    def take(self, address: str) -> Slot | None:
        """A slot for a connection from `address`, a reserve one when the listener is full, or
        None (the connection is hung up): the listener and its reserve are full, or the address
        holds its share."""
        counted = address not in OWN_HOST
        at_cap = counted and self._by_address[address] >= self.limits.per_address
        if self._regular < self.limits.max_connections:
            if at_cap:
                return None
            self._regular += 1
            if counted:
                self._by_address[address] += 1
            return Slot(self, address, reserved=False)
        if (
            at_cap
            or self._reserve >= self.limits.probe_reserve
            or self._reserve_by_address[address] >= RESERVE_PER_ADDRESS
        ):
            return None
        self._reserve += 1
        self._reserve_by_address[address] += 1
        return Slot(self, address, reserved=True)

    def why_full(self, address: str) -> str:
        """Why `take` refused `address` (for the log)."""
        if address not in OWN_HOST and self._by_address[address] >= self.limits.per_address:
            return "address"
        return "listener"

    def _give_back(self, address: str, *, reserved: bool) -> None:
        if reserved:
            self._reserve -= 1
            _decrement(self._reserve_by_address, address)
            return
        self._regular -= 1
        if address not in OWN_HOST:
            _decrement(self._by_address, address)


def _decrement(counts: Counter[str], address: str) -> None:
    counts[address] -= 1
    if counts[address] <= 0:
        del counts[address]


def source_address(peer: object) -> str:
    """The address part of a socket's peer name ("" when unknown, counted as one address);
    an IPv4 address seen through a dual-stack socket is given as plain IPv4."""
    if isinstance(peer, tuple) and peer and isinstance(peer[0], str):
        address = peer[0]
        if address.startswith("::ffff:") and "." in address:
            return address.removeprefix("::ffff:")
        return address
    return ""
