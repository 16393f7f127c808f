"""How every command that reads a cluster (`status`, `pause`, `resume`, `plan`, `doctor`,
`simulate --kubeconfig`) reaches it: the same flags, and the same one line when it cannot.

A kubeconfig that cannot be used (absent, not YAML, not a kubeconfig, no such context) is exit
2, naming the file and the cause; an API server that does not answer is exit 1, naming its
URL. The official client is imported only when a cluster is loaded (simulate runs without it).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brupop.cli.argument_types import dns_label, seconds_up_to
from brupop.cli.program_name import command_name
from brupop.cli.status.terminal import complain
from brupop.entrypoints.pod_namespace import pod_namespace

if TYPE_CHECKING:
    from kubernetes.client import Configuration

EXIT_KUBECONFIG_UNUSABLE = 2
EXIT_CLUSTER_SILENT = 1
_CHECK = "check it with `kubectl config view`"


class ClusterUnusable(Exception):
    """The command cannot use its cluster; the message says why, `exit_code` how it ends."""

    exit_code = EXIT_KUBECONFIG_UNUSABLE


class NoConfiguration(ClusterUnusable):
    """Neither a pod's service account nor any kubeconfig: nothing was named at all."""


class ClusterSilent(ClusterUnusable):
    """The kubeconfig's API server did not answer."""

    exit_code = EXIT_CLUSTER_SILENT


@dataclass(frozen=True)
class ClusterTarget:
    """The kubeconfig and context a command was pointed at (None: as kubectl finds them)."""

    kubeconfig: Path | None = None
    context: str | None = None


def add_target_flags(parser: argparse.ArgumentParser) -> None:
    """`--kubeconfig FILE` and `--context NAME`, as kubectl takes them."""
    parser.add_argument(
        "--kubeconfig", metavar="FILE", help="the kubeconfig (default: $KUBECONFIG, as kubectl)"
    )
    parser.add_argument(
        "--context", metavar="NAME", help="the kubeconfig's context (default: its current one)"
    )


def add_namespace_flag(parser: argparse.ArgumentParser, text: str) -> None:
    """`--namespace NS`, brupop's (default: the pod's own namespace, else brupop's default)."""
    parser.add_argument("--namespace", type=dns_label, default=pod_namespace(), help=text)


def add_timeout_flag(parser: argparse.ArgumentParser, most: float, waited_for: str) -> None:
    """`--timeout SECONDS` (default 10, at most `most`): how long to wait for `waited_for`."""
    parser.add_argument(
        "--timeout",
        type=seconds_up_to(most),
        default=10.0,
        help=f"seconds to wait for {waited_for} (at most {most:g})",
    )


def target_of(args: argparse.Namespace) -> ClusterTarget:
    """The target the flags of `add_target_flags` name."""
    kubeconfig = Path(args.kubeconfig).expanduser() if args.kubeconfig else None
    return ClusterTarget(kubeconfig, args.context or None)


def load_cluster(target: ClusterTarget) -> Configuration:
    """The client configuration of `target` (in a pod, with nothing named: its service
    account); ClusterUnusable (exit 2) when it cannot be used, NoConfiguration when none is."""
    from brupop.adapters.kubernetes.api.kubeconfig import DEFAULT_KUBECONFIG, KubeconfigUnusable
    from brupop.adapters.kubernetes.cluster import load_configuration
    from brupop.ports.errors import UnavailableError

    named = str(target.kubeconfig) if target.kubeconfig is not None else None
    try:
        return load_configuration(named, target.context)
    except KubeconfigUnusable as error:
        raise ClusterUnusable(f"{error}; {_CHECK}") from None
    except UnavailableError:
        location = named or os.environ.get("KUBECONFIG")
        if location:
            raise ClusterUnusable(
                f"the kubeconfig {location} cannot be used: there is no such file"
            ) from None
        raise NoConfiguration(
            f"no kubeconfig: {DEFAULT_KUBECONFIG} does not exist, KUBECONFIG is not set and "
            "this is not a pod; pass --kubeconfig FILE, or set KUBECONFIG as for kubectl"
        ) from None


def reach_cluster(target: ClusterTarget, timeout: float) -> Configuration:
    """`load_cluster`, then its API server asked for `/version`: ClusterSilent (exit 1), naming
    the URL, when it does not answer within `timeout` seconds."""
    import urllib3
    from kubernetes.client import ApiClient
    from kubernetes.client.exceptions import ApiException

    from brupop.adapters.kubernetes.api.errors import no_answer

    configuration = load_cluster(target)
    with ApiClient(configuration) as client:
        try:
            client.call_api(
                "/version", "GET", auth_settings=["BearerToken"], _preload_content=False,
                _request_timeout=(min(timeout, 5.0), timeout),
            )  # fmt: skip
        except ApiException:
            pass  # it answered; what it refuses, the command's own calls will say
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise ClusterSilent(
                f"the Kubernetes API at {configuration.host} does not answer "
                f"({no_answer(error)}): check the kubeconfig's context (kubectl cluster-info)"
            ) from None
    return configuration


def refuse(command: str, error: ClusterUnusable) -> int:
    """Print the one line for `error`, introduced by the command's name; its exit code."""
    complain(f"{command_name(command)}: {error}")
    return error.exit_code
