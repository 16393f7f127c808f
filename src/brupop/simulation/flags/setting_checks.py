"""The timing flags obey the bounds and rules of the settings they become.

Checked through the very settings models the processes read in a cluster, before anything
starts: every bound and cross-field rule of a setting applies to the flag that feeds it, so
`--leader-lease 1 --leader-renew 5` is refused as LEADER_ELECTION_LEASE_SECONDS=1 would be.
"""

from __future__ import annotations

from pathlib import Path

from brupop.entrypoints.agent.settings import load_settings as load_agent_settings
from brupop.entrypoints.apiserver.settings import ApiserverSettings
from brupop.entrypoints.controller.settings import ControllerSettings
from brupop.entrypoints.environment_values import read_settings
from brupop.entrypoints.settings_error import SettingsError
from brupop.simulation.flags.timing import TIMING_FLAGS, Component, Timing

_NO_NAMESPACE_FILE = Path("/nonexistent/brupop-simulate/namespace")
_IDENTITY = {"MY_NODE_NAME": "node-01", "BRUPOP_NAMESPACE": "brupop-simulate"}


class TimingFlagError(ValueError):
    """A timing flag breaks a bound or a rule of the setting it feeds; the message names it."""


def check_timing(timing: Timing) -> None:
    """TimingFlagError naming the first flag whose value its process would refuse."""
    try:
        load_agent_settings(
            {**_IDENTITY, **timing.env_for(Component.AGENT)}, namespace_file=_NO_NAMESPACE_FILE
        )
        # The values given only, not this shell's environment: a flag is checked as its
        # process would check it, whatever the shell happens to export.
        read_settings(ControllerSettings, {**_IDENTITY, **timing.env_for(Component.CONTROLLER)})
        apiserver = {**_IDENTITY, "BRUPOP_CLUSTER": "memory"}
        read_settings(ApiserverSettings, {**apiserver, **timing.env_for(Component.APISERVER)})
    except SettingsError as error:
        raise TimingFlagError(_in_flags(error)) from None


def _in_flags(error: SettingsError) -> str:
    """The error in the words of the command line: each variable named by its flag."""
    flags = {flag.env: f"--{flag.name}" for flag in TIMING_FLAGS if flag.env}
    problem = error.problem
    for variable, flag in sorted(flags.items(), key=lambda item: -len(item[0])):
        problem = problem.replace(variable, flag)
    return f"{flags.get(error.variable, error.variable)}: {problem}"
