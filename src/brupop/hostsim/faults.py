"""Fault budget: BRUPOP_SIM_FAULT_AFTER=M spares the first M times a fault could hit, and
BRUPOP_SIM_FAULT_TIMES=N lets it hit only N times after those.

The counts live in the host's state, so they hold across the many short emulator processes.
"""

from __future__ import annotations

from brupop.hostsim.settings import Faults
from brupop.hostsim.store import HostState, HostStore

# Call-level faults, in the order they win when several are set.
HANG = "hang"
SOCKET_DOWN = "socket-down"
SILENT_EXIT = "silent-exit"
GARBAGE_STDERR = "garbage-stderr"
GARBAGE_STDOUT = "garbage-stdout"
LOCK_STUCK = "lock-stuck"

UPDATE_API_URIS = frozenset(
    {
        "/updates/status",
        "/actions/refresh-updates",
        "/actions/prepare-update",
        "/actions/activate-update",
        "/actions/deactivate-update",
    }
)


def take_budget(faults: Faults, state: HostState) -> bool:
    """Spend one hit of the fault budget: False while the first `after` chances are spared,
    and once `times` hits are used up."""
    if state.fault_spared < faults.after:
        state.fault_spared += 1
        return False
    if faults.times is not None and state.fault_hits >= faults.times:
        return False
    state.fault_hits += 1
    return True


def call_fault(faults: Faults, store: HostStore, path: str) -> str | None:
    """The call-level fault this call suffers, if any (spending the budget)."""
    if not faults.any_call_fault() or not faults.applies_to(path):
        return None
    kind = _kind(faults, path)
    if kind is None:
        return None
    with store.transaction() as state:
        return kind if take_budget(faults, state) else None


def _kind(faults: Faults, path: str) -> str | None:
    if faults.hang_seconds > 0:
        return HANG
    if faults.socket_down:
        return SOCKET_DOWN
    if faults.silent_exit_code:
        return SILENT_EXIT
    if faults.garbage_stderr:
        return GARBAGE_STDERR
    if faults.garbage_stdout:
        return GARBAGE_STDOUT
    if faults.lock_stuck and path in UPDATE_API_URIS:
        return LOCK_STUCK
    return None
