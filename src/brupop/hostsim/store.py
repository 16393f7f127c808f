"""The emulated host's disk: its state as JSON, a mutex for that file, and the update lock.

`update.lock` plays `/run/lock/thar-be-updates.lock`: a background command holds it
exclusively, readers of the update status take it shared, both with try-lock (fcntl flock).
`state.lock` only serialises read-modify-write of `state.json` between processes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

STATE_FILE = "state.json"
MUTEX_FILE = "state.lock"
UPDATE_LOCK_FILE = "update.lock"
LOG_FILE = "host.log"


@dataclass
class HostState:
    """What survives between calls. `update_status` is the wire JSON, None until initialised.

    The partition fields model the GPT: `other_version` is the image in the inactive partition
    set and `boot_other_next` says the next boot takes it (both survive a reboot; the update
    status, on tmpfs, does not).
    """

    node_name: str
    version_id: str
    offered_version: str | None
    other_version: str | None = None
    boot_other_next: bool = False
    boot_id: int = 1
    reboots: int = 0
    fault_hits: int = 0
    update_status: dict[str, Any] | None = None


class HostStore:
    """Locked access to one host directory; seeds a fresh state the first time."""

    def __init__(
        self, host_dir: str, *, node_name: str, seed_version: str, seed_offer: str | None
    ) -> None:
        self.host_dir = host_dir
        self._seed = HostState(
            node_name=node_name, version_id=seed_version, offered_version=seed_offer
        )
        os.makedirs(host_dir, exist_ok=True)

    def path(self, name: str) -> str:
        """The path of one of this host's files."""
        return os.path.join(self.host_dir, name)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[HostState]:
        """Hold the state mutex, yield the state, and write it back when the block succeeds."""
        with self._mutex():
            state = self._load()
            yield state
            self._save(state)

    def read(self) -> HostState:
        """A consistent snapshot of the state."""
        with self._mutex():
            return self._load()

    def read_unlocked(self) -> HostState | None:
        """A best-effort read without the mutex (writes are atomic renames); None if absent."""
        try:
            with open(self.path(STATE_FILE), encoding="utf-8") as file:
                return HostState(**json.load(file))
        except (OSError, ValueError, TypeError):
            return None

    def try_update_lock(self, *, exclusive: bool) -> int | None:
        """Take the update lock without waiting; the open fd holds it, None when it is held."""
        fd = os.open(self.path(UPDATE_LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return fd

    def wait_update_lock_free(self, timeout_seconds: float) -> bool:
        """Wait (briefly) until no process holds the update lock; True when it is free."""
        deadline = time.monotonic() + timeout_seconds
        while True:
            fd = self.try_update_lock(exclusive=True)
            if fd is not None:
                os.close(fd)
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def log(self, event: str, **fields: Any) -> None:
        """Append one JSON line to host.log (never stdout or stderr: they are apiclient's)."""
        record = {"time": now_rfc3339(), "node": self._seed.node_name, "event": event, **fields}
        with contextlib.suppress(OSError), open(self.path(LOG_FILE), "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    @contextlib.contextmanager
    def _mutex(self) -> Iterator[None]:
        fd = os.open(self.path(MUTEX_FILE), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _load(self) -> HostState:
        state = self.read_unlocked()
        if state is None:
            state = HostState(**asdict(self._seed))
        return state

    def _save(self, state: HostState) -> None:
        fd, temp = tempfile.mkstemp(dir=self.host_dir, prefix=".state-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(asdict(state), file, indent=1, sort_keys=True)
            os.replace(temp, self.path(STATE_FILE))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise


def now_rfc3339() -> str:
    """The current UTC time as chrono writes it: RFC 3339 with a `Z`."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
