"""The simulation's agent supervisor releases what it opened once it has stopped."""

from __future__ import annotations

import gc
import warnings

from brupop.entrypoints.simulate.supervisor import AgentSupervisor


def test_a_stopped_supervisor_leaves_no_pipe_to_its_runtime_open() -> None:
    supervisor = AgentSupervisor([], restart_backoff=0.1, restart_backoff_max=0.1)
    supervisor.start()
    supervisor.stop(grace_seconds=0.1)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del supervisor
        gc.collect()

    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
