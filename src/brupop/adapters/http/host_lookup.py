"""Name resolution with a deadline, for the bounded GET.

`getaddrinfo` cannot be interrupted: a resolver that never answers holds its thread for as
long as the C library waits. So each lookup runs in a daemon thread of its own, and the caller
stops waiting at its deadline. At most `LOOKUPS_MAX` lookups are in flight at once: while that
many are stuck, the next lookup fails at once ("lookups stuck") instead of starting yet another
thread, so a resolver that hangs costs a few threads, never one per pass.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Sequence

from brupop.domain.printable import printable

LOOKUPS_MAX = 4
ADDRESSES_MAX = 32  # a name's addresses beyond these are not considered

Resolver = Callable[[str, int], Sequence[str]]


class HostLookupError(Exception):
    """The name could not be resolved in time; the message is a short reason."""


def system_resolver(host: str, port: int) -> Sequence[str]:
    """The addresses `host` resolves to for a TCP connection, in the resolver's order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class HostLookups:
    """Resolves names through `resolver`, each within the caller's deadline."""

    def __init__(self, resolver: Resolver = system_resolver, *, most: int = LOOKUPS_MAX) -> None:
        self._resolver = resolver
        self._slots = threading.BoundedSemaphore(most)

    def addresses(self, host: str, port: int, deadline: float) -> tuple[str, ...]:
        """The addresses of `host` (an address stands for itself), resolved before `deadline`
        (a time.monotonic() value); HostLookupError when not."""
        try:
            return (str(ipaddress.ip_address(host)),)
        except ValueError:
            pass  # a name: resolve it
        if not self._slots.acquire(blocking=False):
            raise HostLookupError(f"name {_shown(host)} not resolved: earlier lookups are stuck")
        outcome: list[Sequence[str] | BaseException] = []
        done = threading.Event()

        def lookup() -> None:
            try:
                outcome.append(self._resolver(host, port))
            except BaseException as error:  # reported to the caller, never lost in the thread
                outcome.append(error)
            finally:
                self._slots.release()
                done.set()

        threading.Thread(target=lookup, name="host-lookup", daemon=True).start()
        if not done.wait(max(deadline - time.monotonic(), 0.0)):
            raise HostLookupError(f"name {_shown(host)} not resolved in time")
        result = outcome[0]
        if isinstance(result, BaseException):
            raise HostLookupError(_reason(host, result)) from None
        found = tuple(str(address) for address in list(result)[:ADDRESSES_MAX])
        if not found:
            raise HostLookupError(f"name {_shown(host)} has no address")
        return found


def _shown(host: str) -> str:
    return printable(host, 80)


def _reason(host: str, error: BaseException) -> str:
    if isinstance(error, socket.gaierror):
        return f"name {_shown(host)} not resolved ({printable(str(error.strerror), 80)})"
    return f"name {_shown(host)} not resolved ({type(error).__name__})"
