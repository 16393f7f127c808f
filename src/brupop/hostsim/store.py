"""The emulated host's disk: its state as JSON, a mutex for that file, and the update lock.

`update.lock` plays `/run/lock/thar-be-updates.lock`: a background command holds it
exclusively, readers of the update status take it shared, both with try-lock (fcntl flock).
`state.lock` only serialises read-modify-write of `state.json` between processes.
Standard library only, and light modules only: this runs at every emulated apiclient call.
"""

from __future__ import annotations

import fcntl
import json
import os
import time

TYPE_CHECKING = False  # typing and dataclasses cost start-up time on every call
if TYPE_CHECKING:
    from types import TracebackType
    from typing import Any

STATE_FILE = "state.json"
MUTEX_FILE = "state.lock"
UPDATE_LOCK_FILE = "update.lock"
LOG_FILE = "host.log"
FIRST_ANSWER_FILE = "first-answer"


class HostState:
    """What survives between calls. `update_status` is the wire JSON, None until initialised.

    The partition fields model the GPT: `other_version` is the image in the inactive partition
    set and `boot_other_next` says the next boot takes it (both survive a reboot; the update
    status, on tmpfs, does not). `reboots` counts reboots; `fault_hits` counts injected faults,
    `fault_spared` the chances a fault let pass (BRUPOP_SIM_FAULT_AFTER).
    """

    FIELDS = (
        "node_name",
        "version_id",
        "offered_version",
        "other_version",
        "boot_other_next",
        "boot_id",
        "reboots",
        "fault_hits",
        "fault_spared",
        "update_status",
    )

    def __init__(
        self,
        *,
        node_name: str,
        version_id: str,
        offered_version: str | None,
        other_version: str | None = None,
        boot_other_next: bool = False,
        boot_id: int = 1,
        reboots: int = 0,
        fault_hits: int = 0,
        fault_spared: int = 0,
        update_status: dict[str, Any] | None = None,
    ) -> None:
        self.node_name = node_name
        self.version_id = version_id
        self.offered_version = offered_version
        self.other_version = other_version
        self.boot_other_next = boot_other_next
        self.boot_id = boot_id
        self.reboots = reboots
        self.fault_hits = fault_hits
        self.fault_spared = fault_spared
        self.update_status = update_status

    def to_json(self) -> dict[str, Any]:
        """The state as stored in state.json."""
        return {name: getattr(self, name) for name in self.FIELDS}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HostState:
        """Read a stored state (unknown keys are ignored)."""
        return cls(**{name: data[name] for name in cls.FIELDS if name in data})


class _Transaction:
    """Holds the state mutex; writes the state back when the block ends without an error."""

    def __init__(self, store: HostStore) -> None:
        self._store = store
        self._fd = -1

    def __enter__(self) -> HostState:
        self._fd = self._store.lock_mutex()
        try:
            self._state = self._store.load()
        except BaseException:
            os.close(self._fd)
            raise
        return self._state

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            if kind is None:
                self._store.save(self._state)
        finally:
            os.close(self._fd)


class HostStore:
    """Locked access to one host directory; seeds a fresh state the first time."""

    def __init__(
        self, host_dir: str, *, node_name: str, seed_version: str, seed_offer: str | None
    ) -> None:
        self.host_dir = host_dir
        self.node_name = node_name
        self._seed_version = seed_version
        self._seed_offer = seed_offer
        os.makedirs(host_dir, exist_ok=True)

    def path(self, name: str) -> str:
        """The path of one of this host's files."""
        return os.path.join(self.host_dir, name)

    def transaction(self) -> _Transaction:
        """`with store.transaction() as state:` read-modify-write under the mutex."""
        return _Transaction(self)

    def first_call(self) -> bool:
        """True for the first call this host ever answers (it leaves a marker file; later
        calls, reboots included, find it)."""
        try:
            os.close(os.open(self.path(FIRST_ANSWER_FILE), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    def read(self) -> HostState:
        """A consistent snapshot of the state."""
        fd = self.lock_mutex()
        try:
            return self.load()
        finally:
            os.close(fd)

    def read_unlocked(self) -> HostState | None:
        """A best-effort read without the mutex (writes are atomic renames); None if absent."""
        try:
            with open(self.path(STATE_FILE), encoding="utf-8") as file:
                return HostState.from_json(json.load(file))
        except (OSError, ValueError, TypeError):
            return None

    def lock_mutex(self) -> int:
        """Take the state mutex (blocking); closing the returned fd releases it."""
        fd = os.open(self.path(MUTEX_FILE), os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def load(self) -> HostState:
        """The stored state; the first call stores the seed (call with the mutex held)."""
        state = self.read_unlocked()
        if state is None:
            state = HostState(
                node_name=self.node_name,
                version_id=self._seed_version,
                offered_version=self._seed_offer,
            )
            self.save(state)
        return state

    def save(self, state: HostState) -> None:
        """Write the state atomically (call with the mutex held)."""
        temp = self.path(f".state-{os.getpid()}.json")
        with open(temp, "w", encoding="utf-8") as file:
            json.dump(state.to_json(), file, indent=1, sort_keys=True)
        os.replace(temp, self.path(STATE_FILE))

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
        record = {"time": now_rfc3339(), "node": self.node_name, "event": event, **fields}
        try:
            with open(self.path(LOG_FILE), "a", encoding="utf-8") as file:
                file.write(json.dumps(record) + "\n")
        except OSError:
            pass


CLOCK_FILE = "BRUPOP_SIM_CLOCK_FILE"  # simulate's shared clock (adapters.system.shared_clock)


def now_rfc3339() -> str:
    """The current UTC time as chrono writes it: RFC 3339 with microseconds and a `Z`; on the
    clock of the simulation that started us, when it shares one."""
    now = time.time() + clock_offset()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"


def clock_offset() -> float:
    """Seconds the shared clock named by BRUPOP_SIM_CLOCK_FILE is ahead of this machine's (0:
    none named, or it cannot be read)."""
    path = os.environ.get(CLOCK_FILE)
    if not path:
        return 0.0
    try:
        with open(path, encoding="ascii") as file:
            value = float(file.read())
    except (OSError, ValueError, UnicodeDecodeError):
        return 0.0
    return value if abs(value) < 1e12 else 0.0  # also refuses nan and inf
