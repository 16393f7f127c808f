"""The emulated host's environment contract: where its state lives, how slow it is, what fails.

Read on every call (the emulator is a fresh process each time), so a simulation may change a
fault or a duration between two calls of the agent.
"""

from __future__ import annotations

import os

from brupop.hostsim.host_kinds import KINDS, UPDATABLE
from brupop.hostsim.versions import is_version

TYPE_CHECKING = False  # typing, dataclasses and collections cost start-up time on every call
if TYPE_CHECKING:
    from collections.abc import Mapping

HOST_DIR = "BRUPOP_SIM_HOST_DIR"
CURRENT_VERSION = "BRUPOP_SIM_CURRENT_VERSION"
TARGET_VERSION = "BRUPOP_SIM_TARGET_VERSION"
NODE_NAME = "BRUPOP_SIM_NODE_NAME"
REFRESH_SECONDS = "BRUPOP_SIM_REFRESH_SECONDS"
PREPARE_SECONDS = "BRUPOP_SIM_PREPARE_SECONDS"
ACTIVATE_SECONDS = "BRUPOP_SIM_ACTIVATE_SECONDS"
REBOOT_KILLS = "BRUPOP_SIM_REBOOT_KILLS"
FIRST_ANSWER_DELAY = "BRUPOP_SIM_FIRST_ANSWER_DELAY_SECONDS"
HOST_KIND = "BRUPOP_SIM_HOST_KIND"

FAULT_REFRESH_FAILS = "BRUPOP_SIM_FAULT_REFRESH_FAILS"
FAULT_PREPARE_FAILS = "BRUPOP_SIM_FAULT_PREPARE_FAILS"
FAULT_ACTIVATE_FAILS = "BRUPOP_SIM_FAULT_ACTIVATE_FAILS"
FAULT_LOCK_STUCK = "BRUPOP_SIM_FAULT_LOCK_STUCK"
FAULT_GARBAGE_STDOUT = "BRUPOP_SIM_FAULT_GARBAGE_STDOUT"
FAULT_GARBAGE_STDERR = "BRUPOP_SIM_FAULT_GARBAGE_STDERR"
FAULT_SILENT_EXIT = "BRUPOP_SIM_FAULT_SILENT_EXIT"
FAULT_SOCKET_DOWN = "BRUPOP_SIM_FAULT_SOCKET_DOWN"
FAULT_HANG_SECONDS = "BRUPOP_SIM_FAULT_HANG_SECONDS"
FAULT_ON_URIS = "BRUPOP_SIM_FAULT_ON_URIS"
FAULT_TIMES = "BRUPOP_SIM_FAULT_TIMES"
FAULT_AFTER = "BRUPOP_SIM_FAULT_AFTER"

DEFAULT_CURRENT_VERSION = "1.0.0"
# Bounds on every number, so that no value can overflow a sleep or a counter later.
LONGEST_SECONDS = 86_400.0
LARGEST_COUNT = 1_000_000
REBOOT_KILL_MODES = ("parent-and-self", "self", "none")


class SimSettingError(ValueError):
    """An environment variable is missing or holds a value the emulator cannot use."""


class Faults:
    """Injected misbehaviour. A fault spares the first `after` calls (or commands) it could hit,
    then hits at most `times` of them (no limit when None)."""

    def __init__(
        self,
        *,
        failing_commands: frozenset[str] = frozenset(),
        lock_stuck: bool = False,
        garbage_stdout: bool = False,
        garbage_stderr: bool = False,
        silent_exit_code: int = 0,
        socket_down: bool = False,
        hang_seconds: float = 0.0,
        on_uris: frozenset[str] = frozenset(),
        times: int | None = None,
        after: int = 0,
    ) -> None:
        self.failing_commands = failing_commands
        self.lock_stuck = lock_stuck
        self.garbage_stdout = garbage_stdout
        self.garbage_stderr = garbage_stderr
        self.silent_exit_code = silent_exit_code
        self.socket_down = socket_down
        self.hang_seconds = hang_seconds
        self.on_uris = on_uris
        self.times = times
        self.after = after

    def applies_to(self, uri: str) -> bool:
        """True when the call-level faults target this URI (all URIs when none are listed)."""
        return not self.on_uris or uri in self.on_uris

    def any_call_fault(self) -> bool:
        """True when some fault changes what a call answers (as opposed to a command's result)."""
        return (
            self.lock_stuck
            or self.garbage_stdout
            or self.garbage_stderr
            or self.silent_exit_code != 0
            or self.socket_down
            or self.hang_seconds > 0
        )


class SimSettings:
    """Everything one emulator call reads from its environment."""

    def __init__(
        self,
        *,
        host_dir: str,
        current_version: str,
        target_version: str | None,
        node_name: str,
        refresh_seconds: float,
        prepare_seconds: float,
        activate_seconds: float,
        reboot_kills: str,
        faults: Faults,
        first_answer_delay: float = 0.0,
        host_kind: str = UPDATABLE,
    ) -> None:
        self.host_dir = host_dir
        self.current_version = current_version
        self.target_version = target_version
        self.node_name = node_name
        self.refresh_seconds = refresh_seconds
        self.prepare_seconds = prepare_seconds
        self.activate_seconds = activate_seconds
        self.reboot_kills = reboot_kills
        self.faults = faults
        self.first_answer_delay = first_answer_delay  # the host's first call answers this late
        self.host_kind = host_kind  # one of host_kinds.KINDS


def load_settings(environ: Mapping[str, str] | None = None) -> SimSettings:
    """Read and check the environment; raise SimSettingError naming the bad variable."""
    env = os.environ if environ is None else environ
    host_dir = env.get(HOST_DIR, "").strip()
    if not host_dir:
        raise SimSettingError(
            f"{HOST_DIR} is not set: it names the directory that holds this emulated host's state"
        )
    reboot_kills = env.get(REBOOT_KILLS, "parent-and-self").strip() or "parent-and-self"
    if reboot_kills not in REBOOT_KILL_MODES:
        raise SimSettingError(f"{REBOOT_KILLS}: {reboot_kills!r} is not one of {REBOOT_KILL_MODES}")
    target = env.get(TARGET_VERSION, "").strip() or None
    host_kind = env.get(HOST_KIND, "").strip() or UPDATABLE
    if host_kind not in KINDS:
        raise SimSettingError(f"{HOST_KIND}: {host_kind[:40]!r} is not one of {', '.join(KINDS)}")
    return SimSettings(
        host_dir=host_dir,
        current_version=_version(env, CURRENT_VERSION) or DEFAULT_CURRENT_VERSION,
        target_version=_version(env, TARGET_VERSION) if target else None,
        node_name=env.get(NODE_NAME, "").strip() or "emulated-host",
        refresh_seconds=_seconds(env, REFRESH_SECONDS, 0.2),
        prepare_seconds=_seconds(env, PREPARE_SECONDS, 0.5),
        activate_seconds=_seconds(env, ACTIVATE_SECONDS, 0.2),
        reboot_kills=reboot_kills,
        faults=_faults(env),
        first_answer_delay=_seconds(env, FIRST_ANSWER_DELAY, 0.0),
        host_kind=host_kind,
    )


def _faults(env: Mapping[str, str]) -> Faults:
    failing = {
        name
        for name, variable in (
            ("refresh", FAULT_REFRESH_FAILS),
            ("prepare", FAULT_PREPARE_FAILS),
            ("activate", FAULT_ACTIVATE_FAILS),
        )
        if _flag(env, variable)
    }
    silent = _integer(env, FAULT_SILENT_EXIT, 0)
    if not 0 <= silent <= 255:
        raise SimSettingError(f"{FAULT_SILENT_EXIT}: an exit code 1-255 (0: off), not {silent}")
    times = env.get(FAULT_TIMES, "").strip()
    uris = env.get(FAULT_ON_URIS, "")
    return Faults(
        failing_commands=frozenset(failing),
        lock_stuck=_flag(env, FAULT_LOCK_STUCK),
        garbage_stdout=_flag(env, FAULT_GARBAGE_STDOUT),
        garbage_stderr=_flag(env, FAULT_GARBAGE_STDERR),
        silent_exit_code=silent,
        socket_down=_flag(env, FAULT_SOCKET_DOWN),
        hang_seconds=_seconds(env, FAULT_HANG_SECONDS, 0.0),
        on_uris=frozenset(uri.strip() for uri in uris.split(",") if uri.strip()),
        times=_integer(env, FAULT_TIMES, 0) if times else None,
        after=_integer(env, FAULT_AFTER, 0),
    )


def _version(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    if value and not is_version(value):
        raise SimSettingError(f"{name}: {value!r} is not a semantic version like 1.19.2")
    return value or None


def _flag(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise SimSettingError(f"{name}: {value!r} is not a boolean (1/0, true/false)")


def _integer(env: Mapping[str, str], name: str, default: int) -> int:
    value = env.get(name, "").strip()
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        raise SimSettingError(f"{name}: {value!r} is not an integer") from None
    if not 0 <= number <= LARGEST_COUNT:
        raise SimSettingError(f"{name}: {number} is outside 0..{LARGEST_COUNT}")
    return number


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    value = env.get(name, "").strip()
    if not value:
        return default
    try:
        number = float(value)
    except ValueError:
        raise SimSettingError(f"{name}: {value!r} is not a number of seconds") from None
    if not 0 <= number <= LONGEST_SECONDS:  # NaN fails this too
        raise SimSettingError(
            f"{name}: {value!r} must be a number of seconds from 0 to {LONGEST_SECONDS:g}"
        )
    return number
