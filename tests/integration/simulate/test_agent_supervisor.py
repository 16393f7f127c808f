"""The simulation's supervisor tells a SIGTERM its own timing caused from one the agent mishandled,
and releases what it opened once it has stopped.

Each test supervises a small stand-in agent (a Python program) under the real container runtime
and stops it at a chosen point of its life: before it has any SIGTERM handler, with its handler,
and after it has put the default action back.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from brupop.simulation.fleet.supervisor import (
    AgentProcessExit,
    AgentSpec,
    AgentSupervisor,
    ExitCause,
    exit_cause,
)
from tests.support.polling import wait_until

NODE = "node-01"
WAIT_SECONDS = 30.0

# No handler, ever: SIGTERM finds the interpreter as it is while it starts.
NO_HANDLER = "import time\ntime.sleep(60)\n"
# A handler that stops cleanly, announced on the log once it is in place.
HANDLER = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\n"
    "print('handler in place', flush=True)\n"
    "time.sleep(60)\n"
)
# A handler, then the default action put back when the file named by argv[1] appears.
HANDLER_THEN_DEFAULT = (
    "import os, signal, sys, time\n"
    "signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\n"
    "print('handler in place', flush=True)\n"
    "while not os.path.exists(sys.argv[1]):\n"
    "    time.sleep(0.02)\n"
    "signal.signal(signal.SIGTERM, signal.SIG_DFL)\n"
    "open(sys.argv[1] + '.done', 'w').close()\n"
    "time.sleep(60)\n"
)


@pytest.fixture
def supervise(tmp_path: Path) -> Iterator[Callable[..., AgentSupervisor]]:
    started: list[AgentSupervisor] = []

    def start(program: str, *args: str, env: dict[str, str] | None = None) -> AgentSupervisor:
        argv = [sys.executable, "-c", program, *args] if program else list(args)
        spec = AgentSpec(
            node=NODE,
            argv=argv,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **(env or {})},
            log_path=tmp_path / f"{NODE}.log",
        )
        # A long backoff: the stand-in is not restarted within the test.
        supervisor = AgentSupervisor([spec], restart_backoff=60, restart_backoff_max=60)
        supervisor.start()
        started.append(supervisor)
        wait_until(
            lambda: supervisor.views()[NODE].pid is not None,
            "the agent started",
            seconds=WAIT_SECONDS,
        )
        return supervisor

    yield start
    for supervisor in started:
        supervisor.stop(grace_seconds=5)


def _stop_and_get_exit(supervisor: AgentSupervisor) -> AgentProcessExit:
    supervisor.stop(grace_seconds=10)
    (exit_,) = supervisor.views()[NODE].exits
    return exit_


def test_a_sigterm_sent_before_the_agent_has_a_handler_is_the_harness_doing(
    supervise: Callable[..., AgentSupervisor],
) -> None:
    supervisor = supervise(NO_HANDLER)

    exit_ = _stop_and_get_exit(supervisor)

    assert exit_.code == -signal.SIGTERM
    assert exit_.sigterm_before_handler
    assert exit_.acceptable
    assert supervisor.running_nodes(ready=True) == []


def test_an_agent_with_its_handler_in_place_is_ready_for_chaos_and_stops_cleanly(
    supervise: Callable[..., AgentSupervisor],
) -> None:
    supervisor = supervise(HANDLER)
    wait_until(
        lambda: supervisor.running_nodes(ready=True) == [NODE],
        "the handler was seen",
        seconds=WAIT_SECONDS,
    )

    exit_ = _stop_and_get_exit(supervisor)

    assert exit_.code == 0
    assert not exit_.sigterm_before_handler
    assert exit_.acceptable


def test_a_sigterm_death_after_the_handler_was_in_place_is_the_agent_failure(
    supervise: Callable[..., AgentSupervisor], tmp_path: Path
) -> None:
    restore = tmp_path / "restore"
    supervisor = supervise(HANDLER_THEN_DEFAULT, str(restore))
    wait_until(
        lambda: supervisor.running_nodes(ready=True) == [NODE],
        "the handler was seen",
        seconds=WAIT_SECONDS,
    )
    restore.touch()
    wait_until(
        Path(f"{restore}.done").exists, "the default action was put back", seconds=WAIT_SECONDS
    )

    exit_ = _stop_and_get_exit(supervisor)

    assert exit_.code == -signal.SIGTERM
    assert not exit_.sigterm_before_handler
    assert not exit_.acceptable


@pytest.mark.parametrize("delay", [0.0, 0.3, 1.5])
def test_the_real_agent_stopped_at_any_moment_of_its_start_up_ends_acceptably(
    supervise: Callable[..., AgentSupervisor], tmp_path: Path, delay: float
) -> None:
    env = {
        "MY_NODE_NAME": NODE,
        "APISERVER_URL": "https://127.0.0.1:9",  # nothing there: the agent keeps retrying
        "LOGGING_FORMATTER": "json",
        "TERMINATION_LOG": str(tmp_path / "termination-log"),
    }
    supervisor = supervise("", sys.executable, "-m", "brupop", "agent", env=env)
    time.sleep(delay)  # any moment will do: the outcome must be acceptable at each

    exit_ = _stop_and_get_exit(supervisor)

    assert exit_.acceptable, exit_
    assert exit_.code == 0 or exit_.sigterm_before_handler, exit_


def test_a_stopped_supervisor_leaves_no_pipe_to_its_runtime_open() -> None:
    supervisor = AgentSupervisor([], restart_backoff=0.1, restart_backoff_max=0.1)
    supervisor.start()
    supervisor.stop(grace_seconds=0.1)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del supervisor
        gc.collect()

    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


@pytest.mark.parametrize(
    ("intended", "code", "recorded"),
    [
        (ExitCause.CHAOS_SIGKILL, -signal.SIGKILL, ExitCause.CHAOS_SIGKILL),
        (ExitCause.CHAOS_SIGKILL, 0, ExitCause.ON_ITS_OWN),  # gone before the kill came
        (ExitCause.CHAOS_SIGTERM, 0, ExitCause.CHAOS_SIGTERM),  # a handled SIGTERM
        (ExitCause.ON_ITS_OWN, 0, ExitCause.ON_ITS_OWN),
    ],
)
def test_a_chaos_kill_that_came_after_the_agent_exited_is_not_its_cause(
    intended: ExitCause, code: int, recorded: ExitCause
) -> None:
    assert exit_cause(intended, code) is recorded
