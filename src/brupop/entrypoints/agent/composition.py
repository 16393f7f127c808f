"""The agent's composition root: ports in, a running agent out, an exit code back.

`main` passes the real adapters; tests pass fakes to this very code path. It is a plain
function, not a dependency-injector container like the controller's and the apiserver's: the
agent runs on every node under a 50 MiB limit, and importing the framework would add about
7 MiB to its peak RSS (7.4 MiB measured on top of the agent's own imports) for three ports and
one service. So, like cosmicpython's `bootstrap()`, the
agent wires itself by hand, and tests swap fakes in by passing another `PortsFactory`. For
the same reason its bundle of ports is a value object: a frozen dataclass compiles its methods at
import, about 1.2 ms of CPU at every start, and a NamedTuple loads `typing`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable

from brupop.adapters.system import event_lines
from brupop.domain.value_objects import value_object
from brupop.entrypoints import early_stop
from brupop.entrypoints.agent.settings import AgentSettings, load_settings
from brupop.entrypoints.invocation import EXIT_FATAL, EXIT_OK, answer_arguments
from brupop.entrypoints.logging.log_filter import LogFilter
from brupop.entrypoints.logging.log_settings import writes_json
from brupop.entrypoints.setting_refusal import SettingsError, refuse_start
from brupop.services.agent.agent import NodeAgent
from brupop.services.agent.config import AgentConfig
from brupop.services.agent.outcomes import AgentExit, ExitKind
from brupop.services.agent.stop import StopFlag

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from types import FrameType

    from brupop.ports.agent.node_operations import NodeOperations
    from brupop.ports.agent.shadow_store import ShadowStore
    from brupop.ports.agent.update_api import UpdateApi
    from brupop.ports.clock import Clock
    from brupop.services.agent.event_log import EventLog

    PortsFactory = Callable[[AgentSettings, Clock], "AgentPorts"]

USAGE = """usage: brupop agent

Runs the node agent of one Bottlerocket node (a DaemonSet pod). It is configured by
environment variables only: MY_NODE_NAME (required), APISERVER_SERVICE_PORT, APISERVER_URL,
EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC, ... (see docs/agent.md).
"""


@value_object
class AgentPorts:
    """The three outside worlds the agent talks to."""

    update_api: UpdateApi
    shadow_store: ShadowStore
    node_operations: NodeOperations


def launch(argv: list[str], build_ports: PortsFactory, clock: Clock) -> int:
    """`brupop agent` from its arguments to its exit code, with ports from `build_ports`.

    Exit codes: 0 stopped (SIGTERM) or rebooting into an update, 1 fatal, 2 bad settings.
    """
    answered = answer_arguments("agent", argv, USAGE)
    if answered is not None:
        return answered
    try:
        settings = load_settings(os.environ)
    except SettingsError as error:
        return refuse_start("agent", error)
    log = configure_agent_logging(settings)
    ports = build_ports(settings, clock)
    return run_agent(
        settings,
        update_api=ports.update_api,
        shadow_store=ports.shadow_store,
        node_operations=ports.node_operations,
        clock=clock,
        log=log,
    )


def configure_agent_logging(settings: AgentSettings) -> event_lines.EventLines:
    """LOGGING_FORMATTER and TRACING_FILTER_DIRECTIVE, as every brupop process reads them; every
    line, the adapters' own included, carries the component and the node. Parts of the directive
    the agent has no use for are named once."""
    log_filter = LogFilter.parse(settings.tracing_filter_directive, "agent")
    log = event_lines.configure(
        level=log_filter.level,
        as_json=writes_json(settings.logging_formatter, on_terminal=sys.stderr.isatty()),
        component="agent",
        node=settings.node_name,
    )
    if log_filter.unused:
        log.warning("logging.directive_parts_unused", unused=list(log_filter.unused))
    return log


def agent_config(settings: AgentSettings) -> AgentConfig:
    """The service's timing knobs from the settings."""
    return AgentConfig(
        loop_interval_seconds=settings.loop_interval_seconds,
        update_check_interval_seconds=settings.update_check_interval_seconds,
        reboot_wait_seconds=settings.reboot_wait_seconds,
        shadow_wait_seconds=settings.shadow_wait_seconds,
        exclude_from_lb_wait_seconds=float(settings.exclude_from_lb_wait_seconds),
    )


def install_stop_handler(stop: StopFlag) -> None:
    """SIGTERM (host shutdown, pod deletion) and SIGINT ask the agent to stop at a safe point.

    The handler only sets the flag: the loop and its waits look at it.
    """

    def request_stop(_signum: int, _frame: FrameType | None) -> None:
        stop.request()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    if early_stop.requested():
        stop.request()


def run_agent(
    settings: AgentSettings,
    *,
    update_api: UpdateApi,
    shadow_store: ShadowStore,
    node_operations: NodeOperations,
    clock: Clock,
    log: EventLog,
) -> int:
    """Wire the agent over these ports, run it until it ends, and return the exit code."""
    stop = StopFlag()
    install_stop_handler(stop)
    agent = NodeAgent(
        update_api,
        shadow_store,
        node_operations,
        clock,
        agent_config(settings),
        stop=stop,
        log=log,
    )
    try:
        outcome = agent.run()
    except Exception as error:  # a bug, not an expected case: say so once, with the traceback
        log.error("agent.crashed", error=type(error).__name__, exc_info=True)
        write_termination_log(settings.termination_log, f"agent crashed: {error!r}")
        return EXIT_FATAL
    finally:
        early_stop.ignore_from_now()
    return exit_code(outcome, settings.termination_log)


def exit_code(outcome: AgentExit, termination_log: str) -> int:
    """0 for a stop or a reboot; 1 for a fatal end, whose reason goes to the termination log."""
    if outcome.kind is ExitKind.FATAL:
        write_termination_log(termination_log, outcome.reason)
        return EXIT_FATAL
    return EXIT_OK


def write_termination_log(path: str, reason: str) -> None:
    """Leave the reason where Kubernetes shows it (`kubectl describe pod`); best effort."""
    with contextlib.suppress(OSError), open(path, "w", encoding="utf-8") as file:
        file.write(reason + "\n")
