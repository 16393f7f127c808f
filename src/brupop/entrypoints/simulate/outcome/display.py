"""What a person sees: a live view on a terminal, plain lines elsewhere, then the summary.

The live view is a progress bar over nodes updated and a per-node table of phases; off a
terminal each phase change is one line. The summary table and the one-line verdict always end
the output, the verdict last. Whatever came from the cluster or a host (node names, versions,
reasons, failures, the verdict that quotes them) is shown through `printable`, and never read
as rich markup, so it can neither send a terminal escape nor restyle the view.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from rich import box
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from brupop.domain.printable import printable
from brupop.domain.states import UpdateState
from brupop.entrypoints.simulate.fleet.observer import NodeView
from brupop.entrypoints.simulate.fleet.supervisor import AgentView
from brupop.entrypoints.simulate.outcome.report import FAILURES_IN_VERDICT, SimulationReport

_PHASES = (
    ("stage", UpdateState.STAGED_AND_PERFORMED_UPDATE),
    ("reboot", UpdateState.REBOOTED_INTO_UPDATE),
    ("monitor", UpdateState.MONITORING_UPDATE),
    ("finish", UpdateState.IDLE),
)


class PlainProgress:
    """One line per node phase change, for logs and pipes."""

    def __init__(self, console: Console, target_version: str, started_at: float) -> None:
        self._console = console
        self._target = target_version
        self._started_at = started_at
        self._lock = threading.Lock()
        self._shown: dict[str, str] = {}

    def node_changed(self, before: NodeView, after: NodeView) -> None:
        """One line when the node's phase changes; the brief "reached X" pauses are skipped."""
        new = after.phase(self._target)
        if new.startswith("reached "):
            return
        elapsed = time.monotonic() - self._started_at
        with self._lock:
            old = self._shown.get(after.node, "starting")
            if old == new:
                return
            self._shown[after.node] = new
            self._console.print(
                f"{elapsed:7.2f}s  {printable(after.node):<10} {old} -> {new}"
                f"  (version {printable(after.current_version or '?')})",
                highlight=False,
                soft_wrap=True,
                markup=False,
            )

    def note(self, text: str) -> None:
        elapsed = time.monotonic() - self._started_at
        with self._lock:
            self._console.print(
                f"{elapsed:7.2f}s  {printable(text)}", highlight=False, soft_wrap=True, markup=False
            )


class LiveView:
    """A progress bar and a per-node state table, refreshed a few times a second."""

    def __init__(
        self,
        console: Console,
        target_version: str,
        nodes: Callable[[], dict[str, NodeView]],
        agents: Callable[[], dict[str, AgentView]],
        active: Callable[[], int],
        limit: str,
    ) -> None:
        self._target = target_version
        self._nodes = nodes
        self._agents = agents
        self._active = active
        self._limit = limit
        self._notes: list[Text] = []
        self._progress = Progress(
            TextColumn("[bold]rolling fleet"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("updated"),
            TimeElapsedColumn(),
            console=console,
        )
        self._task = self._progress.add_task("nodes", total=len(nodes()))
        self._live = Live(
            console=console, get_renderable=self._render, refresh_per_second=6, transient=False
        )

    def __enter__(self) -> LiveView:
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.refresh()
        self._live.__exit__(None, None, None)

    def note(self, text: str) -> None:
        self._notes = [*self._notes[-3:], _shown(text)]

    def node_changed(self, before: NodeView, after: NodeView) -> None:
        """Nothing to do: the table is redrawn from the observer on every refresh."""

    def _render(self) -> RenderableType:
        views = self._nodes()
        agents = self._agents()
        done = sum(view.phase(self._target) == "updated" for view in views.values())
        self._progress.update(self._task, completed=done)
        table = Table(
            title=f"outside Idle: {self._active()} (limit {self._limit})",
            title_justify="left",
            expand=False,
        )
        for column in ("node", "version", "spec", "status", "phase", "restarts", "crashes"):
            table.add_column(column)
        for name, view in sorted(views.items()):
            agent = agents.get(name)
            table.add_row(
                _shown(name),
                _shown(view.current_version or "-"),
                str(view.spec_state or "-"),
                str(view.status_state or "-"),
                _styled_phase(view.phase(self._target)),
                str(agent.restarts if agent else 0),
                str(view.crash_count),
            )
        return Group(self._progress, table, *self._notes)


def _shown(text: str) -> Text:
    """Outside text as a table cell or a line: printable, and never read as markup."""
    return Text(printable(text))


def _styled_phase(phase: str) -> str:
    if phase == "updated":
        return "[green]updated[/]"
    if phase in ("backoff", "error-reset"):
        return f"[red]{phase}[/]"
    if phase in ("waiting", "starting"):
        return f"[dim]{phase}[/]"
    return f"[yellow]{phase}[/]"


def print_summary(console: Console, report: SimulationReport, timeline: Path | None = None) -> None:
    """The per-node table, why the others did not update, where the logs and the timeline
    picture are, then the verdict as the last line."""
    table = Table(
        title="brupop simulate: summary (time per phase in seconds)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for column in ("node", "from", "to", "state", "reboots", "restarts"):
        table.add_column(column, no_wrap=True)
    for label, _ in _PHASES:
        table.add_column(label, justify="right", no_wrap=True)
    for node in report.nodes:
        phases = [_seconds(node.phase_seconds.get(str(state))) for _, state in _PHASES]
        table.add_row(
            _shown(node.name),
            _shown(node.initial_version),
            _shown(node.final_version or "-"),
            _shown((node.final_state or "-") + (" (cordoned)" if node.unschedulable else "")),
            str(node.reboots),
            str(node.agent_restarts),
            *phases,
        )
    console.print(table)
    for node in report.nodes:
        if node.reason:
            why = "; ".join(part for part in (node.reason, _last(node.last_failure)) if part)
            line = printable(f"{node.name}: {why}")
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    console.print(
        f"max outside Idle at once: {report.max_concurrent_observed} "
        f"(limit {report.max_concurrent_allowed or 'unlimited'}); "
        f"tracebacks: {report.tracebacks}; chaos kills: {report.chaos_kills_sent}; "
        f"controller restarts: {report.controller_restarts}" + _early_sigterms(report),
        highlight=False,
    )
    for failure in report.failures[FAILURES_IN_VERDICT:]:
        line = f"also failed: {printable(failure)}"
        console.print(line, highlight=False, soft_wrap=True, markup=False)
    if report.log_dir:
        console.print(f"agent logs: {report.log_dir}", highlight=False, soft_wrap=True)
    if timeline is not None:
        console.print(f"timeline: {timeline}", highlight=False, soft_wrap=True, markup=False)
    console.print(printable(report.verdict), highlight=False, soft_wrap=True, markup=False)


def _early_sigterms(report: SimulationReport) -> str:
    """The agents the harness killed by SIGTERM before they could handle it (not their fault)."""
    early = sum(
        1
        for node in report.nodes
        for exit_ in node.agent_exits
        if exit_.get("sigterm_before_handler") and exit_.get("code") == -15
    )
    return f"; killed by a SIGTERM sent before their handler: {early}" if early else ""


def _last(failure: str) -> str:
    return f"last failure: {failure}" if failure else ""


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
