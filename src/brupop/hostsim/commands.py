"""The host's update commands (thar-be-updates): which state allows them and what they change.

Pure functions over the update status JSON and the host state, so the rules read in one place:
refresh in any state (Idle/Available become Available or Idle by the result), prepare from
Available|Staged to Staged, activate Staged -> Ready, deactivate Ready -> Staged.
"""

from __future__ import annotations

import zlib

from brupop.hostsim.store import HostState, now_rfc3339
from brupop.hostsim.versions import newer

TYPE_CHECKING = False  # keep `typing` out of the emulator's start-up
if TYPE_CHECKING:
    from typing import Any

ARCH = "x86_64"
VARIANT = "aws-k8s-1.30"

# URI of each command, and the kebab-case name the host records in most_recent_command.
COMMAND_URIS = {
    "/actions/refresh-updates": "refresh",
    "/actions/prepare-update": "prepare",
    "/actions/activate-update": "activate",
    "/actions/deactivate-update": "deactivate",
}

NOT_ALLOWED = "Update action not allowed according to update state"
NO_CHOSEN_UPDATE = "Previously chosen Update no longer exists"
NO_STAGED_IMAGE = "No update image applied to staging partition"


def image(version: str) -> dict[str, Any]:
    """An UpdateImage as the host writes it."""
    return {"arch": ARCH, "version": version, "variant": VARIANT}


def os_release(version: str, variant: str = VARIANT) -> dict[str, Any]:
    """`GET /os`: the BottlerocketRelease of the running version of `variant`."""
    build = format(zlib.crc32(version.encode()), "08x")[:7]
    return {
        "pretty_name": f"Bottlerocket OS {version} ({variant})",
        "variant_id": variant,
        "version_id": version,
        "build_id": build,
        "arch": ARCH,
    }


def initial_status(state: HostState) -> dict[str, Any]:
    """The status thar-be-updates writes when none exists (after a boot): Idle, no command."""
    return {
        "update_state": "Idle",
        "available_updates": [],
        "chosen_update": None,
        "active_partition": {"image": image(state.version_id), "next_to_boot": True},
        "staging_partition": None,
        "most_recent_command": None,
    }


def refusal(command: str, status: dict[str, Any]) -> tuple[int, str] | None:
    """(HTTP status, body) when the host refuses `command` in this status, else None."""
    state = status["update_state"]
    if command == "refresh":
        return None
    if command == "prepare":
        if state not in ("Available", "Staged"):
            return 409, NOT_ALLOWED
        return (404, NO_CHOSEN_UPDATE) if status["chosen_update"] is None else None
    wanted = {"activate": "Staged", "deactivate": "Ready"}[command]
    if state != wanted:
        return 409, NOT_ALLOWED
    return (404, NO_STAGED_IMAGE) if status["staging_partition"] is None else None


def finish(command: str, state: HostState, *, failed: bool) -> None:
    """Apply a command that ran to its end (successfully or not) to the state, in place."""
    status = state.update_status
    if status is None:
        return
    if command == "refresh":
        _refresh(state, status, failed=failed)
    elif not failed:
        {"prepare": _prepare, "activate": _activate, "deactivate": _deactivate}[command](
            state, status
        )
    status["most_recent_command"] = {
        "cmd_type": command,
        "cmd_status": "Failed" if failed else "Success",
        "timestamp": now_rfc3339(),
        "exit_status": 1 if failed else 0,
        "stderr": f"emulated failure of the host's {command} command\n" if failed else "",
    }


def _refresh(state: HostState, status: dict[str, Any], *, failed: bool) -> None:
    idle_or_available = status["update_state"] in ("Idle", "Available")
    if failed:
        if idle_or_available:
            status["update_state"] = "Idle"
        return
    offered = state.offered_version
    chosen = offered if offered is not None and newer(offered, state.version_id) else None
    versions = {state.version_id} | ({offered} if offered else set())
    status["available_updates"] = sorted(versions, key=_Desc)
    status["chosen_update"] = image(chosen) if chosen else None
    if idle_or_available:
        status["update_state"] = "Available" if chosen else "Idle"


def _prepare(state: HostState, status: dict[str, Any]) -> None:
    chosen = status["chosen_update"]
    status["staging_partition"] = {"image": dict(chosen), "next_to_boot": False}
    status["update_state"] = "Staged"
    state.other_version = chosen["version"]
    state.boot_other_next = False


def _activate(state: HostState, status: dict[str, Any]) -> None:
    _point_boot(state, status, to_staging=True)
    status["update_state"] = "Ready"


def _deactivate(state: HostState, status: dict[str, Any]) -> None:
    _point_boot(state, status, to_staging=False)
    status["update_state"] = "Staged"


def _point_boot(state: HostState, status: dict[str, Any], *, to_staging: bool) -> None:
    status["staging_partition"]["next_to_boot"] = to_staging
    if status["active_partition"] is not None:
        status["active_partition"]["next_to_boot"] = not to_staging
    state.boot_other_next = to_staging


def boot(state: HostState) -> None:
    """A reboot: take the other partition if it is marked to boot; the update status is lost."""
    if state.boot_other_next and state.other_version is not None:
        state.version_id, state.other_version = state.other_version, state.version_id
    state.boot_other_next = False
    state.reboots += 1
    state.boot_id += 1
    state.update_status = None


class _Desc:
    """Sort key: newest version first."""

    def __init__(self, version: str) -> None:
        self.version = version

    def __lt__(self, other: _Desc) -> bool:
        return newer(self.version, other.version)
