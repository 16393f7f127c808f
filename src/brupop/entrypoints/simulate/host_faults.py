"""The host faults `--fault NODE=FAULT` can inject, as the host emulator's env vars.

Names are short on purpose; the emulator's own variables are documented in docs/host-emulator.md.
"""

from __future__ import annotations

from collections.abc import Mapping

FAULT_ENV: Mapping[str, Mapping[str, str]] = {
    "refresh": {"BRUPOP_SIM_FAULT_REFRESH_FAILS": "1"},
    "prepare": {"BRUPOP_SIM_FAULT_PREPARE_FAILS": "1"},
    "activate": {"BRUPOP_SIM_FAULT_ACTIVATE_FAILS": "1"},
    "lock": {"BRUPOP_SIM_FAULT_LOCK_STUCK": "1"},
    "garbage": {"BRUPOP_SIM_FAULT_GARBAGE_STDOUT": "1"},
    "garbage-stderr": {"BRUPOP_SIM_FAULT_GARBAGE_STDERR": "1"},
    "socket-down": {"BRUPOP_SIM_FAULT_SOCKET_DOWN": "1"},
}
KNOWN_FAULTS = tuple(FAULT_ENV)
