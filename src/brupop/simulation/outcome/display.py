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
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from rich import box
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from brupop.domain.printable import printable
from brupop.domain.reason import Reason
from brupop.simulation.fleet.observer import NodeView
from brupop.simulation.fleet.supervisor import AgentView
from brupop.simulation.outcome.clock_lines import clock_summary
from brupop.simulation.outcome.report import PHASES, SimulationReport, reason_failure


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
    """A progress bar and a per-node table, refreshed a few times a second.

    The nodes in flight come first, then the others by name; the table holds as many rows as
    the terminal has room for, and one more line counts the nodes left out. REASON is the
    controller's, as `brupop status` shows it.
    """

    def __init__(
        self,
        console: Console,
        target_version: str,
        nodes: Callable[[], dict[str, NodeView]],
        agents: Callable[[], dict[str, AgentView]],
        active: Callable[[], int],
        limit: str,
        reasons: Callable[[], dict[str, str]] = dict,
    ) -> None:
        self._console = console
        self._target = target_version
        self._nodes = nodes
        self._agents = agents
        self._active = active
        self._limit = limit
        self._reasons = reasons
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
            console=console, get_renderable=self.render, refresh_per_second=6, transient=False
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

    def render(self) -> RenderableType:
        """The view as drawn now, within the terminal's height."""
        views = self._nodes()
        done = sum(view.phase(self._target) == "updated" for view in views.values())
        self._progress.update(self._task, completed=done)
        ordered = sorted(views.values(), key=lambda view: (not view.active, view.node))
        notes = self._notes
        room = max(1, self._console.size.height - _CHROME_LINES - len(notes))
        shown = ordered if len(ordered) <= room else ordered[: room - 1]
        table = self._table(shown)
        left_out = ordered[len(shown) :]
        rest = [_left_out_line(left_out, self._target)] if left_out else []
        return Group(self._progress, table, *rest, *notes)

    def _table(self, views: list[NodeView]) -> Table:
        agents, reasons = self._agents(), self._reasons()
        wide = self._console.size.width >= _WIDE_COLUMNS
        table = Table(
            title=f"outside Idle: {self._active()} (limit {self._limit})",
            title_justify="left",
            expand=True,
            box=box.SIMPLE_HEAD,
        )
        names = [view.node for view in views]
        table.add_column("node", no_wrap=True, min_width=max(map(len, names), default=4))
        table.add_column("version", no_wrap=True, min_width=7)
        if wide:
            table.add_column("spec", no_wrap=True)
            table.add_column("status", no_wrap=True)
        table.add_column("phase", no_wrap=True, min_width=10)
        table.add_column("restarts", no_wrap=True, justify="right")
        table.add_column("crashes", no_wrap=True, justify="right")
        table.add_column("REASON", no_wrap=True, overflow="ellipsis", ratio=1)
        for view in views:
            agent = agents.get(view.node)
            states = [str(view.spec_state or "-"), str(view.status_state or "-")] if wide else []
            table.add_row(
                _shown(view.node),
                _shown(view.current_version or "-"),
                *states,
                _styled_phase(view.phase(self._target)),
                str(agent.restarts if agent else 0),
                str(view.crash_count),
                _shown(_reason(view, reasons.get(view.node, ""), self._target)),
            )
        return table


# The lines around the table's rows: the progress bar, the table's title, head and rule, the
# blank line below it, and the line counting the nodes left out.
_CHROME_LINES = 6
_WIDE_COLUMNS = 160  # room for the spec and status columns as well as REASON


_NO_UPDATE = f"{Reason.NO_UPDATE.value}: "
_NOTHING_OFFERED = "no update offered"


def _reason(view: NodeView, reason: str, target: str) -> str:
    """The controller's REASON, but for a node that has just updated: the controller's
    `no_update` (true: it runs the version offered) reads as if it never updated."""
    if view.phase(target) != "updated" or not reason.startswith(_NO_UPDATE):
        return reason
    detail = reason.removeprefix(_NO_UPDATE)
    return f"updated to {target}" if detail == _NOTHING_OFFERED else f"updated: {detail}"


def _left_out_line(views: list[NodeView], target: str) -> str:
    phases = Counter(view.phase(target) for view in views)
    counts = ", ".join(f"{count} {phase}" for phase, count in sorted(phases.items()))
    return f"[dim]... and {len(views)} more nodes ({counts})[/]"


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
    for phase in PHASES.values():
        table.add_column(phase, justify="right", no_wrap=True)
    for node in report.nodes:
        phases = [_seconds(node.phase_seconds.get(phase)) for phase in PHASES.values()]
        table.add_row(
            _shown(node.name),
            _shown(node.initial_version),
            _shown(node.final_version or "-"),
            _shown((node.final_state or "-") + (" (cordoned)" if node.unschedulable else "")),
            str(node.reboots),
            str(node.agent_restarts),
            *phases,
        )
    _print_table(console, table)
    left_behind: set[str | None] = set()
    for node in report.nodes:
        if node.reason:  # its sentence, once; the failures below name only its code
            why = "; ".join(part for part in (node.reason, _last(node.last_failure)) if part)
            line = printable(f"{node.name}: {why}")
            console.print(line, highlight=False, markup=False, soft_wrap=True)
            left_behind.add(reason_failure(node, report.to_version))
    console.print(
        f"max outside Idle at once: {report.max_concurrent_observed} "
        f"(limit {report.max_concurrent_allowed or 'unlimited'}); "
        f"tracebacks: {report.tracebacks}; chaos kills: {report.chaos_kills_sent}; "
        f"controller restarts: {report.controller_restarts}" + _early_sigterms(report),
        highlight=False,
    )
    for failure in report.failures[report.failures_in_verdict :]:
        if failure not in left_behind:
            line = f"also failed: {printable(failure)}"
            console.print(line, highlight=False, soft_wrap=True, markup=False)
    if report.clock is not None:
        console.print(clock_summary(report.clock), highlight=False, soft_wrap=True, markup=False)
    if report.log_dir:
        console.print(f"agent logs: {report.log_dir}", highlight=False, soft_wrap=True)
    if timeline is not None:
        console.print(f"timeline: {timeline}", highlight=False, soft_wrap=True, markup=False)
    console.print(printable(report.verdict), highlight=False, soft_wrap=True, markup=False)


def _print_table(console: Console, table: Table) -> None:
    """The table; off a terminal without the spaces rich pads each line with to the width."""
    if console.is_terminal:
        console.print(table)
        return
    with console.capture() as captured:
        console.print(table)
    lines = "\n".join(line.rstrip() for line in captured.get().splitlines())
    console.print(lines, highlight=False, markup=False, soft_wrap=True)


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
