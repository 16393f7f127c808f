"""`brupop simulate`: roll a simulated fleet on this machine and say whether it went well.

Exit codes: 0 every node updated cleanly; 1 the rollout failed (the last line says which node
and why); 2 a bad flag; 3 the simulation itself could not run; 130 interrupted.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from types import FrameType

from rich.console import Console

from brupop.adapters.timeline_picture import draw_timeline
from brupop.cli.cluster_loader import ClusterUnusable, reach_cluster, refuse
from brupop.cli.fleet_description.simulated_cluster import ClusterRefused
from brupop.cli.program_name import command_name
from brupop.domain.printable import printable
from brupop.simulation.flags.options import (
    OptionError,
    SimulationOptions,
    parse_options,
)
from brupop.simulation.outcome.display import print_summary
from brupop.simulation.outcome.report import SimulationReport
from brupop.simulation.simulation import Simulation

EXIT_OK = 0
EXIT_ROLLOUT_FAILED = 1
EXIT_USAGE = 2
EXIT_HARNESS_FAILED = 3
EXIT_INTERRUPTED = 130
_PLAIN_WIDTH = 160
_REACH_SECONDS = 10.0


def main(argv: list[str]) -> int:
    """Parse flags, run the simulation, print the summary, return the exit code."""
    try:
        options = parse_options(argv)
        _reach(options)
    except OptionError as error:
        print(f"{command_name('simulate')}: {error}", file=sys.stderr)
        return EXIT_USAGE
    except ClusterUnusable as error:
        return refuse("simulate", error)
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=_PLAIN_WIDTH, no_color=True)
    live = console.is_terminal if options.live is None else options.live
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        outcome = Simulation(options, console, live=live).run()
    except ClusterRefused as error:
        print(f"{command_name('simulate')}: {error}", file=sys.stderr)
        return EXIT_USAGE
    except ClusterUnusable as error:
        return refuse("simulate", error)
    except KeyboardInterrupt:
        console.print(f"{command_name('simulate')}: interrupted before the fleet was running")
        return EXIT_INTERRUPTED
    except (OSError, RuntimeError) as error:
        said = printable(str(error))  # may quote the cluster's answer
        console.print(
            f"{command_name('simulate')}: the simulation could not run: {said}", markup=False
        )
        return EXIT_HARNESS_FAILED
    finally:
        signal.signal(signal.SIGTERM, previous)
    report = outcome.report
    written = options.report is None or _write_report(console, report, options.report)
    drawn, timeline_error = None, None
    if options.timeline is not None and outcome.timeline is not None:
        try:
            draw_timeline(
                outcome.timeline,
                options.timeline,
                timeline_title(report),
                x_label="seconds since the agents were started",
            )
            drawn = options.timeline
        except OSError as error:
            timeline_error = error
    print_summary(console, report, timeline=drawn)
    if timeline_error is not None:
        console.print(f"brupop simulate: the timeline could not be written: {timeline_error}")
        return EXIT_HARNESS_FAILED
    if outcome.interrupted:
        return EXIT_INTERRUPTED
    if not written:
        return EXIT_HARNESS_FAILED
    return EXIT_OK if report.ok else EXIT_ROLLOUT_FAILED


def _reach(options: SimulationOptions) -> None:
    """With --kubeconfig, its API server must answer before anything is started (the
    official client is loaded only then)."""
    if options.cluster.kubeconfig is not None:
        reach_cluster(options.cluster.target, _REACH_SECONDS)


def timeline_title(report: SimulationReport) -> str:
    """One line above the picture: the fleet, the versions, the limit and the verdict."""
    nodes = report.nodes
    updated = sum(node.updated_to(report.to_version) for node in nodes)
    limit = report.max_concurrent_allowed
    return (
        f"brupop simulate: {len(nodes)} nodes {report.from_version} -> {report.to_version}, "
        f"at most {'unlimited' if limit is None else limit} at once; "
        f"{_outcome(report)}, {updated}/{len(nodes)} updated "
        f"in {report.duration_seconds:.0f} s"
    )


def _outcome(report: SimulationReport) -> str:
    """As the verdict begins: a halt is a halt, not just a failure."""
    if report.halted:
        return "HALTED"
    return "OK" if report.ok else "FAILED"


def _write_report(console: Console, report: SimulationReport, path: Path) -> bool:
    """Write the JSON report; if that fails now (checked at start, so rarely), say so and
    go on to the summary rather than lose it."""
    try:
        report.write(path)
    except OSError as error:
        console.print(f"brupop simulate: could not write the report {path}: {error}", markup=False)
        return False
    return True


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    """SIGTERM ends a simulation as Ctrl-C does: stop everything, then report."""
    raise KeyboardInterrupt
