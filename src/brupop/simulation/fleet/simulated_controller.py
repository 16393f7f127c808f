"""The controller of one simulated run, which a scenario may stop and start again
(`--restart-controller-after`); each start rewrites the endpoints file `brupop status` reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from brupop.domain.reporting.waiting_reason import NodeReport, RolloutView
from brupop.simulation.flags.options import SimulationOptions
from brupop.simulation.fleet import components
from brupop.simulation.fleet.endpoints import Endpoints, write_endpoints


class SimulatedController:
    """At most one controller at a time over the run's cluster (each a fresh replica from
    `new_controller`), and how often it restarted."""

    def __init__(
        self,
        new_controller: Callable[[], components.ControllerHandle],
        *,
        apiserver_url: str,
        work_dir: Path,
        ca_file: Path,
    ) -> None:
        self._new_controller = new_controller
        self._apiserver_url = apiserver_url
        self._work_dir = work_dir
        self._ca_file = ca_file
        self._handle: components.ControllerHandle | None = None
        self.restarts = 0
        self.started = False  # it ran at least once (a scenario may have stopped it since)

    def start(self) -> None:
        self.started = True
        self._handle = self._new_controller()
        self._handle.start()
        endpoints = Endpoints(self._apiserver_url, self._handle.url, self._ca_file)
        write_endpoints(self._work_dir, endpoints)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.stop()
            self._handle = None

    def restart(self) -> None:
        self.start()
        self.restarts += 1

    def status_rows(self) -> list[NodeReport]:
        """The controller's `brupop status` rows as of its last pass (none while it is down)."""
        return self._handle.reports() if self._handle is not None else []

    def last_pass(self) -> tuple[RolloutView | None, int]:
        """What the controller's last pass knew, and the update time it expected (nothing
        while it is down)."""
        return self._handle.last_pass() if self._handle is not None else (None, 0)

    def status_reasons(self) -> dict[str, str]:
        return components.status_reasons(self._handle)


class ControllerRestart:
    """The `--restart-controller-after` scenario: stop the controller mid-rollout, restart it."""

    def __init__(
        self,
        options: SimulationOptions,
        *,
        stop: Callable[[], None],
        start: Callable[[], None],
        note: Callable[[str], None],
    ) -> None:
        self._after = options.restart_controller_after
        self._down_for = options.controller_down_seconds
        self._down_since: float | None = None
        self._stop = stop
        self._start = start
        self._note = note

    @property
    def done(self) -> bool:
        return self._after is None and self._down_since is None

    def step(self, rollout_began_at: float | None) -> None:
        """Stop or start the controller when its moment has come."""
        now = time.monotonic()
        began = rollout_began_at
        if self._after is not None and began is not None and now - began >= self._after:
            self._stop()
            self._note("controller stopped (scenario)")
            self._down_since = now
            self._after = None
        if self._down_since is not None and now - self._down_since >= self._down_for:
            self._start()
            self._note("controller started again (scenario)")
            self._down_since = None
