"""`python -m tests.support.agent_scenario`: `brupop agent` with a fake cluster side.

It runs the very launch path of `brupop agent` (settings, logging, SIGTERM handler, exit
codes) with the real `apiclient` adapter, pointed by APICLIENT_PATH at the host emulator, but
with an in-memory shadow store and fake node operations instead of the apiserver client.

Scenario variables (besides the agent's own settings):
* AGENT_SCENARIO_SPEC: `<state>[:<version>]`, the spec the controller wrote (default Idle);
* AGENT_SCENARIO_STATUS: `<state>:<current>:<target>`, the status already reported, if any;
* AGENT_SCENARIO_WAITING_FILE: a file created each time the agent long-polls its shadow;
* AGENT_SCENARIO_REPORT: a JSON file written at exit: node calls and status writes;
* AGENT_SCENARIO_EARLY_SIGTERM: when set, SIGTERM arrives before the agent is wired (as during
  its imports), with the provisional handler `brupop agent` installs first in place;
* AGENT_SCENARIO_LATE_SIGTERM: when set, SIGTERM arrives again while the interpreter shuts down,
  after it has put back the default action of the signals Python handled.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

from brupop.adapters.system.clock import SystemClock
from brupop.domain.host.agent_shadow import AgentShadow, AgentShadowSpec, AgentShadowStatus
from brupop.domain.states import UpdateState
from brupop.entrypoints import early_stop
from brupop.entrypoints.agent.composition import AgentPorts, launch
from brupop.entrypoints.agent.main import build_update_api
from brupop.entrypoints.agent.settings import AgentSettings
from brupop.ports.clock import Clock
from tests.fakes.node_operations import FakeNodeOperations
from tests.fakes.shadow_store import InMemoryShadowStore


class LongPollingShadowStore(InMemoryShadowStore):
    """The in-memory shadow, whose long-poll blocks for its timeout (on the system clock)
    like the apiserver's, and tells each wait through `waiting_file`."""

    def __init__(self, node_name: str, waiting_file: Path | None) -> None:
        super().__init__(node_name, clock=SystemClock())
        self._waiting_file = waiting_file

    def wait_for_change(
        self, resource_version: str | None, timeout_seconds: float
    ) -> AgentShadow | None:
        if self._waiting_file is not None:
            self._waiting_file.touch()
        return super().wait_for_change(resource_version, timeout_seconds)


def _spec(text: str) -> AgentShadowSpec:
    state, _, version = text.partition(":")
    return AgentShadowSpec(state=UpdateState(state or "Idle"), version=version or None)


def _status(text: str) -> AgentShadowStatus | None:
    if not text:
        return None
    state, current, target = text.split(":")
    return AgentShadowStatus(
        current_version=current, target_version=target, current_state=UpdateState(state)
    )


class SigtermAtShutdown:
    """Signals this process when collected, which for a module global is at interpreter exit."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)


_late_signals: list[SigtermAtShutdown] = []


def main() -> int:
    """Run the scenario's agent; return its exit code."""
    waiting = os.environ.get("AGENT_SCENARIO_WAITING_FILE")
    report = os.environ.get("AGENT_SCENARIO_REPORT")
    node = FakeNodeOperations()
    stores: list[LongPollingShadowStore] = []

    def scenario_ports(settings: AgentSettings, clock: Clock) -> AgentPorts:
        store = LongPollingShadowStore(settings.node_name, Path(waiting) if waiting else None)
        store.put(
            _spec(os.environ.get("AGENT_SCENARIO_SPEC", "")),
            _status(os.environ.get("AGENT_SCENARIO_STATUS", "")),
        )
        stores.append(store)
        return AgentPorts(build_update_api(settings, clock), store, node)

    if os.environ.get("AGENT_SCENARIO_EARLY_SIGTERM"):
        early_stop.install()
        os.kill(os.getpid(), signal.SIGTERM)
    if os.environ.get("AGENT_SCENARIO_LATE_SIGTERM"):
        _late_signals.append(SigtermAtShutdown())
    code = launch(sys.argv[1:], scenario_ports, SystemClock())
    if report:
        writes = [s.to_json() for store in stores for s in store.status_writes]
        Path(report).write_text(json.dumps({"node_calls": node.calls, "status_writes": writes}))
    return code


if __name__ == "__main__":
    sys.exit(main())
