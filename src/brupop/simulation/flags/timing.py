"""The simulation's compressed intervals: one flag per setting, and the env vars it becomes.

The original waits minutes (agent loop 5 s, update check 120 s, reboot wait 180 s, drain
forever); simulate keeps the same code paths and only shortens the waits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class Component(StrEnum):
    """Who reads a timing setting."""

    AGENT = "agent"
    APISERVER = "apiserver"
    CONTROLLER = "controller"
    HOST = "host"
    HARNESS = "harness"


@dataclass(frozen=True)
class TimingFlag:
    """One `--<name> SECONDS` flag, its fast default and the setting it feeds."""

    name: str
    default: float
    component: Component
    env: str | None
    help: str
    allow_zero: bool = False
    also: Component | None = None  # a second reader of the same setting
    most: float = 3600.0  # the reader's own settings may allow less (checked at parse time)


TIMING_FLAGS: tuple[TimingFlag, ...] = (
    TimingFlag("agent-loop-interval", 0.2, Component.AGENT, "AGENT_LOOP_INTERVAL_SECONDS",
               "agent sleep between loop iterations"),
    TimingFlag("update-check-interval", 30.0, Component.AGENT, "UPDATE_CHECK_INTERVAL_SECONDS",
               "agent's minimum gap between update checks"),
    TimingFlag("reboot-wait", 5.0, Component.AGENT, "REBOOT_WAIT_SECONDS",
               "agent's wait for the host to go down after asking for a reboot"),
    TimingFlag("shadow-wait", 10.0, Component.AGENT, "SHADOW_WAIT_SECONDS",
               "agent's long-poll for shadow changes"),
    TimingFlag("host-poll-interval", 0.05, Component.AGENT, "HOST_POLL_INTERVAL_SECONDS",
               "agent's poll of a running host command"),
    TimingFlag("host-command-deadline", 5.0, Component.AGENT, "HOST_COMMAND_DEADLINE_SECONDS",
               "agent's wait for one host command to finish"),
    TimingFlag("apiclient-timeout", 10.0, Component.AGENT, "APICLIENT_TIMEOUT_SECONDS",
               "one apiclient subprocess call"),
    TimingFlag("apiclient-rate-period", 0.02, Component.AGENT, "APICLIENT_RATE_PERIOD_SECONDS",
               "agent's apiclient rate limit period", allow_zero=True),
    TimingFlag("apiclient-retry-base", 0.1, Component.AGENT, "APICLIENT_RETRY_BASE_SECONDS",
               "first apiclient retry delay", allow_zero=True),
    TimingFlag("apiclient-retry-max", 0.5, Component.AGENT, "APICLIENT_RETRY_MAX_SECONDS",
               "largest apiclient retry delay", allow_zero=True),
    TimingFlag("apiserver-client-timeout", 5.0, Component.AGENT,
               "APISERVER_CLIENT_TIMEOUT_SECONDS", "agent's plain apiserver call timeout"),
    TimingFlag("drain-timeout", 15.0, Component.APISERVER, "DRAIN_TIMEOUT_SECONDS",
               "apiserver's limit on one drain (the agent waits that long for it too)",
               also=Component.AGENT),
    TimingFlag("eviction-retry-interval", 0.2, Component.APISERVER,
               "EVICTION_RETRY_INTERVAL_SECONDS", "apiserver's wait between refused evictions"),
    TimingFlag("pod-deletion-timeout", 5.0, Component.APISERVER, "POD_DELETION_TIMEOUT_SECONDS",
               "apiserver's wait for an evicted pod to go"),
    TimingFlag("controller-tick", 0.2, Component.CONTROLLER, "CONTROLLER_TICK_SECONDS",
               "controller loop interval"),
    TimingFlag("leader-lease", 2.0, Component.CONTROLLER, "LEADER_ELECTION_LEASE_SECONDS",
               "controller leader lease length"),
    TimingFlag("leader-renew", 0.5, Component.CONTROLLER, "LEADER_ELECTION_RENEW_SECONDS",
               "controller leader lease renewal interval"),
    TimingFlag("timeout-idle", 15.0, Component.CONTROLLER, "TIMEOUT_IDLE_SECONDS",
               "limit for a node to reach Idle"),
    TimingFlag("timeout-staged", 20.0, Component.CONTROLLER,
               "TIMEOUT_STAGED_AND_PERFORMED_UPDATE_SECONDS",
               "limit for a node to stage and activate"),
    TimingFlag("timeout-rebooted", 40.0, Component.CONTROLLER,
               "TIMEOUT_REBOOTED_INTO_UPDATE_SECONDS", "limit for a node to drain and reboot"),
    TimingFlag("timeout-monitoring", 15.0, Component.CONTROLLER,
               "TIMEOUT_MONITORING_UPDATE_SECONDS", "limit for a node's monitoring"),
    TimingFlag("host-step", 0.1, Component.HOST, None,
               "emulated host's time for each of refresh, prepare, activate and reboot",
               allow_zero=True),
    TimingFlag("host-prepare", 0.0, Component.HOST, None,
               "emulated host's time for prepare (the image's download and write); 0: as "
               "--host-step", allow_zero=True),
    TimingFlag("restart-backoff", 0.2, Component.HARNESS, None,
               "first wait before restarting an exited agent (doubles each time)",
               allow_zero=True),
    TimingFlag("restart-backoff-max", 2.0, Component.HARNESS, None,
               "longest wait before restarting an exited agent", allow_zero=True),
)  # fmt: skip

_BY_NAME = {flag.name: flag for flag in TIMING_FLAGS}


@dataclass(frozen=True)
class Timing:
    """The value of every timing flag, by flag name."""

    seconds: Mapping[str, float] = field(
        default_factory=lambda: {flag.name: flag.default for flag in TIMING_FLAGS}
    )

    @classmethod
    def from_flags(cls, given: Mapping[str, float]) -> Timing:
        values = {flag.name: flag.default for flag in TIMING_FLAGS}
        values.update(given)
        return cls(seconds=values)

    def __getitem__(self, name: str) -> float:
        if name not in _BY_NAME:
            raise KeyError(name)
        return self.seconds[name]

    def env_for(self, component: Component) -> dict[str, str]:
        """The settings env vars of `component`, as text."""
        return {
            flag.env: _text(self.seconds[flag.name])
            for flag in TIMING_FLAGS
            if component in (flag.component, flag.also) and flag.env is not None
        }


def _text(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)
