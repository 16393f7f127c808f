"""`brupop status --timeline FILE`: draw the rollout from what the cluster remembers.

The path and the drawing library are checked first (exit 2, as for a kubeconfig that cannot
be used), then the shadows and Events are read through the Kubernetes API (exit 1 when it
cannot be reached, or when the namespace holds no shadow), with the update policy's halt when
it has one. The concurrency limit comes from the controller's `/status` (at `--url`
when given) when it answers; without it the picture has no limit line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

from brupop.adapters.timeline_picture import PicturePathError, check_picture_path, draw_timeline
from brupop.cli.cluster_loader import ClusterTarget, ClusterUnusable, reach_cluster, refuse
from brupop.cli.extras import TIMELINE
from brupop.cli.program_name import command_name
from brupop.cli.status.cluster_history import ClusterHistory, read_history
from brupop.cli.status.cluster_timeline import (
    ClusterTimeline,
    cluster_timeline,
    limit_of,
    policy_moments,
)
from brupop.cli.status.policy_line import PolicyUnreadable, read_policy
from brupop.cli.status.reaching import StatusUnavailable
from brupop.cli.status.terminal import complain, show
from brupop.ports.errors import PortError

EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE = 0, 1, 2
_URL_IS_NOT_ENOUGH = (
    "--timeline reads the shadows and their Events through the Kubernetes API; --url {url} "
    "gives only the concurrency limit"
)
_NO_SHADOWS = (
    "no BottlerocketShadow in namespace {namespace!r}: nothing to draw; is brupop installed "
    "there, and are its agents running? (pass --namespace; kubectl get brs -A)"
)


def write_cluster_timeline(
    raw_path: str,
    namespace: str,
    timeout: float,
    read_limit: Callable[[], str],
    target: ClusterTarget | None = None,
    url: str | None = None,
) -> int:
    """Draw the cluster's timeline to `raw_path`; the exit code. `url` (--url) is where the
    limit is read; the rows still need the cluster, and a refusal says so."""
    if missing := TIMELINE.missing():
        return _fail(
            f"--timeline needs {', '.join(missing)}, from the 'simulate' extra: "
            f"{TIMELINE.install_hint()}",
            EXIT_USAGE,
        )
    try:
        path = check_picture_path(raw_path)
    except PicturePathError as error:
        return _fail(f"--timeline: {error}", EXIT_USAGE)
    try:
        history = _read(target or ClusterTarget(), namespace, timeout)
    except ClusterUnusable as error:
        if url:
            return _fail(f"{error} ({_URL_IS_NOT_ENOUGH.format(url=url)})", error.exit_code)
        return refuse("status", error)
    except PortError as error:
        return _fail(f"cannot read the shadows and their Events: {error}", EXIT_UNREACHABLE)
    if not history.shadows:
        return _fail(_NO_SHADOWS.format(namespace=namespace), EXIT_UNREACHABLE)
    limit = _limit(read_limit)
    drawn = cluster_timeline(history, datetime.now(UTC), limit_of(limit))
    try:
        draw_timeline(
            drawn.timeline, path, _title(drawn, namespace, limit), x_label=_x_label(drawn)
        )
    except OSError as error:
        return _fail(f"the timeline could not be written: {error}", EXIT_UNREACHABLE)
    rows = len(drawn.timeline.rows)
    show(f"timeline: {path} ({rows} nodes, {len(history.events)} Events)")
    return EXIT_OK


def _read(target: ClusterTarget, namespace: str, timeout: float) -> ClusterHistory:
    """The shadows and Events (PortError when they cannot be read), and the policy's halt."""
    configuration = reach_cluster(target, timeout)
    history = read_history(configuration, namespace, timeout)
    try:
        policy = read_policy(configuration, namespace, timeout)
    except PolicyUnreadable as error:  # the nodes' rows are still worth drawing
        complain(f"{command_name('status')}: {error}")
        return history
    return replace(history, fleet=policy_moments(policy))


def _limit(read_limit: Callable[[], str]) -> str:
    """The controller's MAX_CONCURRENT_UPDATE (`unlimited` too), or `unknown`."""
    try:
        return read_limit()
    except (StatusUnavailable, ClusterUnusable) as error:
        complain(f"{command_name('status')}: drawn without the concurrency limit: {error}")
        return "unknown"


def _title(drawn: ClusterTimeline, namespace: str, limit: str) -> str:
    timeline = drawn.timeline
    return (
        f"brupop status: {len(timeline.rows)} nodes in {namespace}; limit {limit}, "
        f"at most {timeline.most_in_flight} in flight"
    )


def _x_label(drawn: ClusterTimeline) -> str:
    return (
        f"seconds since {drawn.start:%Y-%m-%d %H:%M:%S} UTC "
        "(a cluster does not record when a drain ends: the reboot includes it)"
    )


def _fail(message: str, code: int) -> int:
    complain(f"{command_name('status')}: {message}")
    return code
