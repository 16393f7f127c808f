"""FakeUpdateApi: an in-memory Bottlerocket host behind the UpdateApi port.

It follows the host's own rules (Bottlerocket's thar-be-updates), the same ones the host
emulator (brupop.hostsim) follows, and raises the same typed errors as the apiclient adapter;
tests/contract/update_api runs one suite over both so they cannot drift apart.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from brupop.domain.boot_mode import BootMode, read_fips_report
from brupop.domain.host.host import (
    CommandStatus,
    CommandType,
    HostCommand,
    HostUpdateState,
    HostUpdateStatus,
    OsInfo,
    Partition,
    UpdateImage,
)
from brupop.domain.host_kind import HostClass, classify_settings_answer
from brupop.domain.versions import compare_versions
from brupop.hostsim.host_kinds import fips_report
from brupop.ports.agent.update_api import UpdateApi
from brupop.ports.clock import Clock
from brupop.ports.errors import (
    HostApiError,
    HostCommandFailedError,
    HostCommandKilledError,
    HostRejectedError,
    HostStateConflictError,
)

# Names accepted in `fail_next`, `fail_always` and (for the four commands) `failing_commands`.
COMMANDS = (
    "os_info",
    "host_class",
    "update_status",
    "refresh_updates",
    "prepare_update",
    "activate_update",
    "deactivate_update",
    "reboot",
)
_IDLE, _AVAILABLE = HostUpdateState.IDLE, HostUpdateState.AVAILABLE
_STAGED, _READY = HostUpdateState.STAGED, HostUpdateState.READY


class FakeUpdateApi:
    """A host that moves Idle -> Available -> Staged -> Ready and boots the new version.

    Like a real host, an offer (`offer(version)`) is seen at the next refresh, which records
    the chosen update; the update status is lost at a reboot (None until the next command);
    the boot partition flag decides which version a reboot brings up.

    Fault switches:
    * `fail_next[call] = error` raises `error` once, on the next `call`, before it acts;
    * `fail_always[call] = error` raises it on every `call`;
    * `failing_commands` holds commands ("refresh_updates", "prepare_update", ...) that the host
      runs but that end with cmd_status Failed (HostCommandFailedError, like the adapter);
    * `reboot_kills_apiclient` makes reboot() reboot the host and then raise
      HostCommandKilledError(SIGTERM), as when the shutdown kills apiclient before it answers.
    """

    def __init__(
        self,
        current_version: str = "1.0.0",
        offered_version: str | None = None,
        *,
        clock: Clock | None = None,
        variant: str = "aws-k8s-1.30",
        arch: str = "x86_64",
        kind: str = "updatable",
    ) -> None:
        self.current_version = current_version
        self.offered_version = offered_version
        self.variant = variant
        self.arch = arch
        self.kind = kind  # as the emulator's BRUPOP_SIM_HOST_KIND (hostsim/host_kinds.py)
        self.fail_next: dict[str, HostApiError] = {}
        self.fail_always: dict[str, HostApiError] = {}
        self.failing_commands: set[str] = set()
        self.reboot_kills_apiclient = False
        self.calls: list[str] = []
        self.reboots = 0
        self._clock = clock
        self._other_version: str | None = None  # the image in the inactive partition set
        self._boot_other_next = False
        self._status: HostUpdateStatus | None = None

    # --- test helpers -----------------------------------------------------------------

    def offer(self, version: str | None) -> None:
        """Make the update repository offer `version` (None: nothing); seen at the next refresh."""
        self.offered_version = version

    @property
    def state(self) -> HostUpdateState:
        """The host's update state (Idle while the status is uninitialised)."""
        return self._status.update_state if self._status else _IDLE

    # --- UpdateApi ----------------------------------------------------------------------

    def os_info(self) -> OsInfo:
        self._enter("os_info")
        return OsInfo(
            version_id=self.current_version,
            pretty_name=f"Bottlerocket OS {self.current_version} ({self.variant})",
            variant_id=self.variant,
            build_id="fake000",
            arch=self.arch,
        )

    def host_class(self) -> HostClass:
        self._enter("host_class")
        if self.kind == "lockdown":
            return classify_settings_answer(500, "Live datastore missing", None)
        if self.kind == "unexpected":
            return classify_settings_answer(403, "Forbidden", None)
        settings = {} if self.kind == "no-updates" else {"updates": {"version-lock": "latest"}}
        return classify_settings_answer(200, "", settings)

    def boot_mode(self) -> BootMode | None:
        self._enter("boot_mode")
        return read_fips_report(fips_report(self.kind, self.reboots))

    def update_status(self) -> HostUpdateStatus | None:
        self._enter("update_status")
        return self._status

    def refresh_updates(self) -> HostUpdateStatus:
        status = self._start("refresh_updates")
        if self._failed("refresh_updates"):
            update: dict[str, object] = (
                {"update_state": _IDLE} if status.update_state in (_IDLE, _AVAILABLE) else {}
            )
            return self._finish(CommandType.REFRESH, status, update, failed=True)
        offered = self.offered_version
        chosen = (
            offered if offered and compare_versions(offered, self.current_version) > 0 else None
        )
        versions = sorted({self.current_version, *([offered] if offered else [])}, key=_Newest)
        update = {
            "available_updates": versions,
            "chosen_update": self._image(chosen) if chosen else None,
        }
        if status.update_state in (_IDLE, _AVAILABLE):
            update["update_state"] = _AVAILABLE if chosen else _IDLE
        return self._finish(CommandType.REFRESH, status, update)

    def prepare_update(self) -> HostUpdateStatus:
        status = self._start("prepare_update")
        if status.update_state not in (_AVAILABLE, _STAGED):
            raise _not_allowed("prepare-update")
        if status.chosen_update is None:
            raise HostRejectedError("Previously chosen Update no longer exists (HTTP 404)", 404)
        if self._failed("prepare_update"):
            return self._finish(CommandType.PREPARE, status, {}, failed=True)
        self._other_version, self._boot_other_next = status.chosen_update.version, False
        staging = Partition(image=status.chosen_update, next_to_boot=False)
        update = {"staging_partition": staging, "update_state": _STAGED}
        return self._finish(CommandType.PREPARE, status, update)

    def activate_update(self) -> HostUpdateStatus:
        return self._point_boot("activate_update", CommandType.ACTIVATE, _STAGED, _READY)

    def deactivate_update(self) -> HostUpdateStatus:
        return self._point_boot("deactivate_update", CommandType.DEACTIVATE, _READY, _STAGED)

    def reboot(self) -> None:
        self._enter("reboot")
        if self._boot_other_next and self._other_version is not None:
            self.current_version, self._other_version = self._other_version, self.current_version
        self._boot_other_next = False
        self._status = None
        self.reboots += 1
        if self.reboot_kills_apiclient:
            raise HostCommandKilledError(
                "apiclient raw -u /actions/reboot -m POST: killed by SIGTERM",
                signal=int(signal.SIGTERM),
            )

    # --- host internals -----------------------------------------------------------------

    def _enter(self, call: str) -> None:
        self.calls.append(call)
        error = self.fail_next.pop(call, None) or self.fail_always.get(call)
        if error is not None:
            raise error

    def _start(self, call: str) -> HostUpdateStatus:
        """Enter a command; like thar-be-updates, initialise the status first if there is none.
        A variant without in-place updates has no thar-be-updates: every command is a 500."""
        self._enter(call)
        if self.kind == "no-updates":
            raise HostRejectedError(f"{call}: thar-be-updates is missing (HTTP 500)", status=500)
        if self.kind == "eol":
            self.offered_version = None  # the variant's repository publishes no more
        if self._status is None:
            active = Partition(image=self._image(self.current_version), next_to_boot=True)
            self._status = HostUpdateStatus(update_state=_IDLE, active_partition=active)
        return self._status

    def _failed(self, call: str) -> bool:
        return call in self.failing_commands

    def _point_boot(
        self, call: str, cmd_type: CommandType, source: HostUpdateState, target: HostUpdateState
    ) -> HostUpdateStatus:
        status = self._start(call)
        if status.update_state is not source:
            raise _not_allowed(cmd_type.value + "-update")
        staging = status.staging_partition
        if staging is None:
            raise HostRejectedError("No update image applied to staging partition (HTTP 404)", 404)
        if self._failed(call):
            return self._finish(cmd_type, status, {}, failed=True)
        to_staging = target is _READY
        self._boot_other_next = to_staging
        active = status.active_partition
        update = {
            "update_state": target,
            "staging_partition": replace(staging, next_to_boot=to_staging),
            "active_partition": replace(active, next_to_boot=not to_staging) if active else None,
        }
        return self._finish(cmd_type, status, update)

    def _finish(
        self,
        cmd_type: CommandType,
        status: HostUpdateStatus,
        update: Mapping[str, Any],
        *,
        failed: bool = False,
    ) -> HostUpdateStatus:
        record = HostCommand(
            cmd_type=cmd_type,
            cmd_status=CommandStatus.FAILED if failed else CommandStatus.SUCCESS,
            timestamp=self._clock.now() if self._clock else datetime.now(UTC),
            exit_status=1 if failed else 0,
            stderr=f"fake host: {cmd_type.value} failed\n" if failed else "",
        )
        self._status = replace(status, **update, most_recent_command=record)
        if failed:
            raise HostCommandFailedError(f"{cmd_type.value}: host reports Failed (exit status 1)")
        return self._status

    def _image(self, version: str) -> UpdateImage:
        return UpdateImage(version=version, arch=self.arch, variant=self.variant)


class _Newest:
    """Sort key: newest version first."""

    def __init__(self, version: str) -> None:
        self.version = version

    def __lt__(self, other: _Newest) -> bool:
        return compare_versions(self.version, other.version) > 0


def _not_allowed(command: str) -> HostStateConflictError:
    return HostStateConflictError(
        f"{command}: Update action not allowed according to update state (HTTP 409)", status=409
    )


_: UpdateApi = FakeUpdateApi()
