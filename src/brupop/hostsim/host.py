"""The emulated host API server: routes `apiclient raw` requests and answers like Bottlerocket.

Update commands are checked at once, answered 204, and finished by a detached background
process that holds the update lock for the configured time (like thar-be-updates' fork).
"""

from __future__ import annotations

import json
import os
import time

from brupop.hostsim import commands, host_kinds
from brupop.hostsim.faults import take_budget
from brupop.hostsim.settings import SimSettings
from brupop.hostsim.store import HostStore

TYPE_CHECKING = False  # keep `typing` out of the emulator's start-up
if TYPE_CHECKING:
    from typing import Any

LOCK_HELD = "Update lock held"
SHARED_LOCK_BUSY = (
    "Unable to obtain shared lock for reading update status: "
    "Resource temporarily unavailable (os error 11)"
)
UNINITIALIZED = "Update status is uninitialized, refresh-updates to initialize it"
_ROUTES = {
    "/os": "GET",
    "/settings": "GET",
    "/report/fips": "GET",
    "/updates/status": "GET",
    "/actions/reboot": "POST",
} | {uri: "POST" for uri in commands.COMMAND_URIS}
_CHECK_INTERVAL = 0.05


class Response:
    """An HTTP answer; `reboot` asks the caller to act out the shutdown after answering."""

    def __init__(self, status: int, body: str = "", *, reboot: bool = False) -> None:
        self.status = status
        self.body = body
        self.reboot = reboot


class EmulatedHost:
    """One host, backed by its state directory."""

    def __init__(self, settings: SimSettings, store: HostStore) -> None:
        self._settings = settings
        self._store = store

    def handle(self, method: str, path: str) -> Response:
        """Answer one request the way the Bottlerocket API server would."""
        allowed = _ROUTES.get(path)
        if allowed is None:
            return Response(404)
        if method != allowed:
            return Response(405)
        kind = self._settings.host_kind
        if path == "/os":
            variant = host_kinds.VARIANTS[kind]
            return _json(commands.os_release(self._store.read().version_id, variant))
        if path == "/settings":
            status, body = host_kinds.settings_answer(kind)
            return _json(body) if isinstance(body, dict) else Response(status, body)
        if path == "/report/fips":
            return _json(host_kinds.fips_report(kind, self._store.read().reboots))
        if kind == host_kinds.NO_UPDATES and path in commands.COMMAND_URIS:
            return Response(500, host_kinds.NO_UPDATER)
        if path == "/updates/status":
            return self._update_status()
        if path == "/actions/reboot":
            return self._reboot()
        return self._command(commands.COMMAND_URIS[path])

    def _update_status(self) -> Response:
        fd = self._store.try_update_lock(exclusive=False)
        if fd is None:
            return Response(423, SHARED_LOCK_BUSY)
        try:
            status = self._store.read().update_status
        finally:
            os.close(fd)
        return Response(404, UNINITIALIZED) if status is None else _json(status)

    def _command(self, command: str) -> Response:
        fd = self._store.try_update_lock(exclusive=True)
        if fd is None:
            self._store.log("command.refused", command=command, reason="lock held")
            return Response(423, LOCK_HELD)
        try:
            with self._store.transaction() as state:
                if state.update_status is None:
                    state.update_status = commands.initial_status(state)
                refused = commands.refusal(command, state.update_status)
                boot_id = state.boot_id
            if refused is not None:
                self._store.log("command.refused", command=command, status=refused[0])
                return Response(*refused)
            self._store.log("command.started", command=command)
            self._spawn(command, boot_id)
        finally:
            os.close(fd)
        return Response(204)

    def _spawn(self, command: str, boot_id: int) -> None:
        """Fork a detached worker; it inherits the open lock fd and so keeps the lock held."""
        if os.fork() != 0:
            return
        try:
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDWR)
            for target in (0, 1, 2):
                os.dup2(devnull, target)
            self._work(command, boot_id)
        finally:
            os._exit(0)

    def _work(self, command: str, boot_id: int) -> None:
        deadline = time.monotonic() + self._duration(command)
        while (left := deadline - time.monotonic()) > 0:
            time.sleep(min(left, _CHECK_INTERVAL))
            seen = self._store.read_unlocked()
            if seen is None or seen.boot_id != boot_id:
                return  # the host rebooted: the command died with it
        faults = self._settings.faults
        with self._store.transaction() as state:
            if state.boot_id != boot_id:
                return
            failed = command in faults.failing_commands and take_budget(faults, state)
            if self._settings.host_kind == host_kinds.EOL:
                state.offered_version = None  # the variant's repository publishes no more
            commands.finish(command, state, failed=failed)
            update_state = state.update_status["update_state"] if state.update_status else None
        self._store.log(
            "command.finished", command=command, failed=failed, update_state=update_state
        )

    def _duration(self, command: str) -> float:
        settings = self._settings
        return {
            "refresh": settings.refresh_seconds,
            "prepare": settings.prepare_seconds,
        }.get(command, settings.activate_seconds)

    def _reboot(self) -> Response:
        with self._store.transaction() as state:
            before = state.version_id
            commands.boot(state)
            after, reboots = state.version_id, state.reboots
        # A running update command dies with the host; wait for its worker to notice.
        self._store.wait_update_lock_free(timeout_seconds=1.0)
        self._store.log(
            "host.rebooted", version_before=before, version_after=after, reboots=reboots
        )
        return Response(204, reboot=True)


def _json(body: dict[str, Any]) -> Response:
    return Response(200, json.dumps(body, separators=(",", ":")))
