"""A NodeAgent wired to fakes (host, shadow, node, clock) and a log that remembers every line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from brupop.services.agent.agent import NodeAgent
from brupop.services.agent.config import AgentConfig
from brupop.services.agent.stop import StopFlag
from tests.fakes.clock import FakeClock
from tests.fakes.node_operations import FakeNodeOperations
from tests.fakes.shadow_store import InMemoryShadowStore
from tests.fakes.update_api import FakeUpdateApi


@dataclass(frozen=True)
class LogLine:
    """One structured line: its level, event name and fields."""

    level: str
    event: str
    fields: dict[str, Any]


@dataclass
class RecordedLog:
    """An EventLog that keeps its lines for assertions."""

    lines: list[LogLine] = field(default_factory=list)

    def debug(self, event: str, **fields: Any) -> None:
        self.lines.append(LogLine("debug", event, fields))

    def info(self, event: str, **fields: Any) -> None:
        self.lines.append(LogLine("info", event, fields))

    def warning(self, event: str, **fields: Any) -> None:
        self.lines.append(LogLine("warning", event, fields))

    def error(self, event: str, **fields: Any) -> None:
        self.lines.append(LogLine("error", event, fields))

    def at(self, level: str) -> list[LogLine]:
        """The lines logged at `level`."""
        return [line for line in self.lines if line.level == level]

    def events(self, event: str) -> list[LogLine]:
        """The lines with event name `event`."""
        return [line for line in self.lines if line.event == event]


@dataclass
class AgentRig:
    """Everything a test needs to drive and inspect one agent."""

    host: FakeUpdateApi
    store: InMemoryShadowStore
    node: FakeNodeOperations
    clock: FakeClock
    stop: StopFlag
    log: RecordedLog
    agent: NodeAgent


def make_rig(
    *,
    current: str = "1.0.0",
    offered: str | None = "1.1.0",
    config: AgentConfig | None = None,
    host: FakeUpdateApi | None = None,
) -> AgentRig:
    """An agent over a host running `current` and offered `offered`, with no shadow yet."""
    clock = FakeClock()
    host = host or FakeUpdateApi(current, offered, clock=clock)
    store = InMemoryShadowStore(clock=clock)
    node = FakeNodeOperations()
    stop = StopFlag()
    log = RecordedLog()
    agent = NodeAgent(host, store, node, clock, config or AgentConfig(), stop=stop, log=log)
    return AgentRig(host, store, node, clock, stop, log, agent)
