"""The host faults `--fault NODE=FAULT` injects, as the host emulator's env vars.

Every fault lets the node learn of the update first and strikes while it updates. Call-level
faults (a lock that never frees, garbage output, a missing API socket) are aimed at the update
commands (prepare, activate, deactivate); a failing refresh spares the first refresh (the
agent's first update check), so it fails the refresh that starts staging and every later one.
The emulator's own variables are documented in docs/host-emulator.md.
"""

from __future__ import annotations

from collections.abc import Mapping

UPDATE_COMMAND_URIS = "/actions/prepare-update,/actions/activate-update,/actions/deactivate-update"
_ON_UPDATE_COMMANDS = {"BRUPOP_SIM_FAULT_ON_URIS": UPDATE_COMMAND_URIS}

FAULT_ENV: Mapping[str, Mapping[str, str]] = {
    "refresh": {"BRUPOP_SIM_FAULT_REFRESH_FAILS": "1", "BRUPOP_SIM_FAULT_AFTER": "1"},
    "prepare": {"BRUPOP_SIM_FAULT_PREPARE_FAILS": "1"},
    "activate": {"BRUPOP_SIM_FAULT_ACTIVATE_FAILS": "1"},
    "lock": {"BRUPOP_SIM_FAULT_LOCK_STUCK": "1", **_ON_UPDATE_COMMANDS},
    "garbage": {"BRUPOP_SIM_FAULT_GARBAGE_STDOUT": "1", **_ON_UPDATE_COMMANDS},
    "garbage-stderr": {"BRUPOP_SIM_FAULT_GARBAGE_STDERR": "1", **_ON_UPDATE_COMMANDS},
    "socket-down": {"BRUPOP_SIM_FAULT_SOCKET_DOWN": "1", **_ON_UPDATE_COMMANDS},
}
KNOWN_FAULTS = tuple(FAULT_ENV)

HOST_KIND_ENV = "BRUPOP_SIM_HOST_KIND"
"""`--host-kind`: the kind of Bottlerocket host the emulator plays."""
HOST_KINDS = ("lockdown", "no-updates", "eol", "unexpected", "fips", "fips-lost")

FIRST_ANSWER_DELAY_ENV = "BRUPOP_SIM_FIRST_ANSWER_DELAY_SECONDS"
"""`--late-host`: the host's first call answers this many seconds late."""
