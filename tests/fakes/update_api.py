"""FakeUpdateApi: an in-memory Bottlerocket host behind the UpdateApi port.

It follows the host's own state rules (thar-be-updates) and raises the same typed errors as
the apiclient adapter, so agent tests exercise real host behaviour without processes.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from datetime import UTC, datetime

from brupop.domain.host import (
    CommandStatus,
    CommandType,
    HostCommand,
    HostUpdateState,
    HostUpdateStatus,
    OsInfo,
    Partition,
    UpdateImage,
)
from brupop.domain.versions import compare_versions
from brupop.ports.clock import Clock
from brupop.ports.errors import (
    HostApiError,
    HostCommandFailedError,
    HostCommandKilledError,
    HostRejectedError,
)
from brupop.ports.update_api import UpdateApi

# Names accepted in `fail_next` / `fail_always` (the UpdateApi method names).
COMMANDS = (
    "os_info",
    "update_status",
    "refresh_updates",
    "prepare_update",
    "activate_update",
    "deactivate_update",
    "reboot",
)

_ARCH = "x86_64"
_VARIANT = "aws-k8s-1.30"


class FakeUpdateApi:
    """A host that moves Idle -> Available -> Staged -> Ready and boots the new version.

    Fault switches:
    * `fail_next[cmd] = error` raises `error` once, on the next call of `cmd`, before it acts;
    * `fail_always[cmd] = error` raises it on every call of `cmd`;
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
        variant: str = _VARIANT,
        arch: str = _ARCH,
    ) -> None:
        self.current_version = current_version
        self.offered_version = offered_version
        self.variant = variant
        self.arch = arch
        self.fail_next: dict[str, HostApiError] = {}
        self.fail_always: dict[str, HostApiError] = {}
        self.failing_commands: set[str] = set()
        self.reboot_kills_apiclient = False
        self.calls: list[str] = []
        self.reboots = 0
        self._clock = clock
        self._state = HostUpdateState.IDLE
        self._staged_version: str | None = None
        self._next_to_boot = False
        self._initialised = False
        self._last_command: HostCommand | None = None

    # --- test helpers -----------------------------------------------------------------

    def offer(self, version: str | None) -> None:
        """Make the update repository offer `version` (None: nothing) from the next refresh on."""
        self.offered_version = version

    @property
    def state(self) -> HostUpdateState:
        """The host's update state (Idle after a boot, even while status is uninitialised)."""
        return self._state

    # --- UpdateApi ----------------------------------------------------------------------

    def os_info(self) -> OsInfo:
        self._enter("os_info")
        return OsInfo(
            version_id=self.current_version,
            pretty_name=f"Bottlerocket OS {self.current_version} ({self.variant})",
            variant_id=self.variant,
            build_id="fake0000",
            arch=self.arch,
        )

    def update_status(self) -> HostUpdateStatus | None:
        self._enter("update_status")
        return self._status() if self._initialised else None

    def refresh_updates(self) -> HostUpdateStatus:
        self._enter("refresh_updates")
        return self._run(CommandType.REFRESH, "refresh_updates", None, self._refresh)

    def prepare_update(self) -> HostUpdateStatus:
        self._enter("prepare_update")
        if self._state not in (HostUpdateState.AVAILABLE, HostUpdateState.STAGED):
            raise _not_allowed("prepare-update")
        if self._chosen() is None:
            raise HostRejectedError("No update chosen to prepare (HTTP 404)", status=404)
        return self._run(CommandType.PREPARE, "prepare_update", HostUpdateState.STAGED, self._stage)

    def activate_update(self) -> HostUpdateStatus:
        self._enter("activate_update")
        if self._state is not HostUpdateState.STAGED:
            raise _not_allowed("activate-update")
        return self._run(
            CommandType.ACTIVATE, "activate_update", HostUpdateState.READY, self._set_boot(True)
        )

    def deactivate_update(self) -> HostUpdateStatus:
        self._enter("deactivate_update")
        if self._state is not HostUpdateState.READY:
            raise _not_allowed("deactivate-update")
        return self._run(
            CommandType.DEACTIVATE,
            "deactivate_update",
            HostUpdateState.STAGED,
            self._set_boot(False),
        )

    def reboot(self) -> None:
        self._enter("reboot")
        if self._state is HostUpdateState.READY and self._staged_version is not None:
            self.current_version = self._staged_version
        self.reboots += 1
        self._state = HostUpdateState.IDLE
        self._staged_version = None
        self._next_to_boot = False
        self._initialised = False
        self._last_command = None
        if self.reboot_kills_apiclient:
            raise HostCommandKilledError(
                "apiclient raw -u /actions/reboot -m POST: killed by SIGTERM",
                signal=int(signal.SIGTERM),
            )

    # --- host internals -----------------------------------------------------------------

    def _enter(self, command: str) -> None:
        self.calls.append(command)
        error = self.fail_next.pop(command, None) or self.fail_always.get(command)
        if error is not None:
            raise error

    def _run(
        self,
        cmd_type: CommandType,
        name: str,
        success_state: HostUpdateState | None,
        effect: Callable[[], None],
    ) -> HostUpdateStatus:
        self._initialised = True
        failed = name in self.failing_commands
        if not failed:
            effect()
            if success_state is not None:
                self._state = success_state
        self._last_command = HostCommand(
            cmd_type=cmd_type,
            cmd_status=CommandStatus.FAILED if failed else CommandStatus.SUCCESS,
            timestamp=self._now(),
            exit_status=1 if failed else 0,
            stderr="fake host: command failed" if failed else "",
        )
        status = self._status()
        if failed:
            raise HostCommandFailedError(f"Host command {cmd_type.value} failed")
        return status

    def _refresh(self) -> None:
        if self._state in (HostUpdateState.IDLE, HostUpdateState.AVAILABLE):
            self._state = (
                HostUpdateState.AVAILABLE if self._chosen() is not None else HostUpdateState.IDLE
            )

    def _stage(self) -> None:
        self._staged_version = self._chosen()
        self._next_to_boot = False

    def _set_boot(self, next_to_boot: bool) -> Callable[[], None]:
        def effect() -> None:
            self._next_to_boot = next_to_boot

        return effect

    def _chosen(self) -> str | None:
        offered = self.offered_version
        if offered is None or compare_versions(offered, self.current_version) <= 0:
            return None
        return offered

    def _image(self, version: str) -> UpdateImage:
        return UpdateImage(version=version, arch=self.arch, variant=self.variant)

    def _status(self) -> HostUpdateStatus:
        chosen = self._chosen()
        staged = self._staged_version
        return HostUpdateStatus(
            update_state=self._state,
            available_updates=[chosen, self.current_version] if chosen else [self.current_version],
            chosen_update=self._image(chosen) if chosen else None,
            active_partition=Partition(
                image=self._image(self.current_version), next_to_boot=not self._next_to_boot
            ),
            staging_partition=Partition(
                image=self._image(staged) if staged else None, next_to_boot=self._next_to_boot
            ),
            most_recent_command=self._last_command,
        )

    def _now(self) -> datetime:
        return self._clock.now() if self._clock is not None else datetime.now(UTC)


def _not_allowed(command: str) -> HostRejectedError:
    return HostRejectedError(
        f"{command}: Update action not allowed according to update state (HTTP 409)", status=409
    )


_: UpdateApi = FakeUpdateApi()
