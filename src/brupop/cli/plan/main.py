"""`brupop plan`: before a rollout, the order the controller will update the nodes in, when
each one is expected to start and finish, and what holds it back until when.

It reads the live cluster (or, with `--simulate`, the fleet `brupop simulate` would build) and
the policy in force (or `--policy FILE`), then steps the controller's own rules forward on a
virtual clock (`domain/planning`). It never writes. Exit codes: 0 the plan was printed; 1 the
cluster could not be read, or the picture not written; 2 a bad flag, kubeconfig or policy file.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from brupop.adapters.timeline_picture import PicturePathError, check_picture_path
from brupop.cli.cluster_loader import ClusterUnusable, refuse
from brupop.cli.extras import TIMELINE
from brupop.cli.plan.flags import PlanFlagError, PlanOptions, build_parser, read_options
from brupop.cli.plan.fleet_sources import (
    controller_limit,
    live_cluster,
    simulated_cluster,
)
from brupop.cli.plan.plan_picture import draw_plan
from brupop.cli.plan.plan_table import format_plan
from brupop.cli.program_name import command_name
from brupop.cli.status.reaching import StatusUnavailable
from brupop.cli.status.terminal import complain, printable_document, show
from brupop.domain.planning.fleet_plan import FleetPlan
from brupop.domain.planning.plan_inputs import FleetSnapshot, PlanAssumptions, learned_from
from brupop.domain.planning.rollout_plan import plan_rollout_ahead
from brupop.domain.printable import printable
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.ports.errors import NotFoundError, PortError
from brupop.services.plan_snapshot import read_fleet

EXIT_OK, EXIT_UNREADABLE, EXIT_USAGE = 0, 1, 2
ERROR_MAX_LENGTH = 200


def main(argv: list[str]) -> int:
    """Parse, read, plan, print; the exit code."""
    args = build_parser().parse_args(argv)
    try:
        options = read_options(args)
        picture = _picture_path(options)
    except PlanFlagError as error:
        return _fail(str(error), EXIT_USAGE)
    try:
        snapshot = _snapshot(options)
    except ClusterUnusable as error:
        return refuse("plan", error)
    except NotFoundError as error:
        return _fail(_not_installed(error, options.namespace), EXIT_UNREADABLE)
    except PortError as error:
        message = printable(" ".join(str(error).split()), ERROR_MAX_LENGTH)
        return _fail(f"cannot read the cluster: {message}", EXIT_UNREADABLE)
    limit, limit_source = _limit(options, snapshot)
    assumptions = PlanAssumptions.learned(
        snapshot.status,
        duration_seconds=options.duration_seconds,
        limit=limit,
        controller_node=options.controller_node,
        release_age_quorum=options.release_age_quorum,
        staged_seconds=options.staged_seconds,
    )
    plan = plan_rollout_ahead(snapshot, assumptions)
    if options.json:
        extra = {
            "expected_update_source": _source(assumptions, snapshot),
            "max_concurrent_source": limit_source,
        }
        show(json.dumps(printable_document(plan.as_json(extra)), indent=2))
    else:
        learned = 0 if assumptions.duration_given else learned_from(snapshot.status)
        text = format_plan(
            plan,
            learned_from=learned,
            duration_given=assumptions.duration_given,
            policy_file=args.policy,
            limit_source=limit_source,
        )
        show(text)
    return _draw(plan, picture) if picture is not None else EXIT_OK


def _snapshot(options: PlanOptions) -> FleetSnapshot:
    now = datetime.now(UTC)
    if options.simulated is not None:
        cluster = simulated_cluster(options.simulated, options.namespace)
        return read_fleet(cluster, now, policy_file=options.policy)
    live = live_cluster(options.target, options.namespace, options.timeout)
    try:
        snapshot = read_fleet(live, now, policy_file=options.policy)
    finally:
        live.close()
    if not snapshot.shadows:
        raise NoShadows(options.namespace, len(snapshot.opted_in()))
    return snapshot


class NoShadows(NotFoundError):
    """The namespace holds no shadow: brupop is not there, or no agent has started yet."""

    def __init__(self, namespace: str, opted_in: int) -> None:
        super().__init__(
            f"no BottlerocketShadow in namespace {namespace!r} ({opted_in} nodes opted in): is "
            "brupop installed there, and are its agents running? (pass --namespace; "
            "kubectl get brs -A)"
        )


def _not_installed(error: NotFoundError, namespace: str) -> str:
    """One line for a cluster without the shadow CRD (a 404 on the listing), or no shadows."""
    if isinstance(error, NoShadows):
        return str(error)
    return (
        "the cluster has no BottlerocketShadow resource (its CRD is not installed): install "
        f"brupop, or check the kubeconfig's context (brupop doctor --namespace {namespace})"
    )


def _limit(options: PlanOptions, snapshot: FleetSnapshot) -> tuple[ConcurrencyLimit, str]:
    """The environment's limit the plan assumes, and where it comes from: the policy's
    maxConcurrent wins over it; then --max-concurrent; then the controller's /status."""
    assumed = options.limit or ConcurrencyLimit(1)
    if snapshot.policy.scheduling.max_concurrent is not None:
        return assumed, "the policy's maxConcurrent"
    if options.limit is not None:
        return options.limit, "--max-concurrent"
    if options.simulated is not None:
        return assumed, "simulate's default"
    try:
        return controller_limit(options.target, options.namespace, options.timeout), (
            "the controller's /status"
        )
    except (StatusUnavailable, ClusterUnusable) as error:
        said = printable(" ".join(str(error).split()), ERROR_MAX_LENGTH)
        return assumed, f"assumed: the controller's /status did not answer: {said}"


def _picture_path(options: PlanOptions) -> Path | None:
    if options.timeline is None:
        return None
    if missing := TIMELINE.missing():
        raise PlanFlagError(
            f"--timeline needs {', '.join(missing)}, from the 'simulate' extra: "
            f"{TIMELINE.install_hint()}"
        )
    try:
        return check_picture_path(options.timeline)
    except PicturePathError as error:
        raise PlanFlagError(f"--timeline: {error}") from None


def _draw(plan: FleetPlan, path: Path) -> int:
    try:
        rows = draw_plan(plan, path)
    except OSError as error:
        return _fail(f"the timeline could not be written: {error}", EXIT_UNREADABLE)
    complain(f"timeline: {path} ({rows} nodes)")
    return EXIT_OK


def _source(assumptions: PlanAssumptions, snapshot: FleetSnapshot) -> str:
    if assumptions.duration_given:
        return "--duration"
    count = learned_from(snapshot.status)
    return f"p90 of the last {count} updates" if count else "default guess"


def _fail(message: str, code: int) -> int:
    complain(f"{command_name('plan')}: {message}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
