"""The `cluster` flags of `brupop simulate`: which cluster the rehearsal runs over.

Without `--kubeconfig` it is the in-memory cluster (the default, nothing else needed). With it,
a real API server of simulate's own (e.g. `scripts/control-plane up DIR`), where simulate
installs the chart's RBAC from the rendered manifest (`--manifest`, by default the one this
source tree renders, deploy/bottlerocket-update-operator.yaml).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import brupop
from brupop.cli.cluster_loader import ClusterTarget, load_cluster
from brupop.cli.fleet_description.flag_values import OptionError

MANIFEST_NAME = "bottlerocket-update-operator.yaml"


@dataclass(frozen=True)
class ClusterFlags:
    """The real cluster to run over (None: the in-memory one) and the chart to take RBAC from."""

    kubeconfig: Path | None = None
    manifest: Path | None = None
    context: str | None = None

    @property
    def target(self) -> ClusterTarget:
        """The kubeconfig and context, as every command's cluster loader takes them."""
        return ClusterTarget(self.kubeconfig, self.context)


def add_cluster_flags(parser: argparse.ArgumentParser) -> None:
    cluster = parser.add_argument_group("cluster")
    cluster.add_argument(
        "--kubeconfig",
        default=None,
        metavar="FILE",
        help="run over the real API server of this kubeconfig (a cluster of simulate's own: "
        "one holding a Node simulate did not create is refused)",
    )
    cluster.add_argument(
        "--manifest",
        default=None,
        metavar="FILE",
        help="with --kubeconfig: the rendered chart whose RBAC is installed (default: "
        f"deploy/{MANIFEST_NAME} of this source tree)",
    )
    cluster.add_argument(
        "--context",
        default=None,
        metavar="NAME",
        help="with --kubeconfig: its context to use (default: its current one)",
    )


def read_cluster(args: argparse.Namespace) -> ClusterFlags:
    """The cluster flags, checked: the manifest must be readable now, and the kubeconfig
    usable (ClusterUnusable, the line every command prints, when it is not)."""
    if args.kubeconfig is None:
        for flag in ("manifest", "context"):
            if getattr(args, flag) is not None:
                raise OptionError(f"--{flag}: only with --kubeconfig")
        return ClusterFlags()
    if args.manifest is not None:
        manifest = _readable("--manifest", Path(args.manifest))
    elif (found := bundled_manifest()) is not None:
        manifest = found
    else:
        raise OptionError(f"--manifest: no deploy/{MANIFEST_NAME} here; name the rendered chart")
    choice = ClusterFlags(Path(args.kubeconfig).expanduser(), manifest, args.context)
    load_cluster(choice.target)  # read now, before anything is started
    return choice


def bundled_manifest() -> Path | None:
    """The rendered chart of the source tree this package runs from, if it is one."""
    candidate = Path(brupop.__file__).resolve().parents[2] / "deploy" / MANIFEST_NAME
    return candidate if candidate.is_file() else None


def _readable(flag: str, path: Path) -> Path:
    try:
        with path.open("rb"):
            pass
    except OSError as error:
        raise OptionError(f"{flag}: cannot read {path}: {error.strerror or error}") from None
    return path
