"""The subcommands of `scripts/control-plane`: build [--real-nodes], up DIR [--real-nodes N],
down DIR, status DIR, and restart DIR COMPONENT [--kill] [--new-signing-key] (an outage of one
component, for the recovery tests; kube-apiserver with a rotated service-account key)."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from tests.support.control_plane.go_errors import BuildError
from tests.support.control_plane.versions import default_cache

NO_GO = "control-plane build: the `go` command is missing; install Go 1.26 or newer and rerun"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="scripts/control-plane", description=__doc__)
    commands = top.add_subparsers(dest="command", required=True)
    build_command = commands.add_parser(
        "build", help="build the binaries into the cache (skips cached ones)"
    )
    build_command.add_argument(
        "--real-nodes",
        action="store_true",
        help="also kubelet, kube-scheduler, kube-proxy, CoreDNS and the pause image",
    )
    for name, text in (
        ("up", "start the control plane in DIR and wait until it is ready"),
        ("down", "stop the processes that `up` started in DIR"),
        ("status", "show which of DIR's processes are running"),
    ):
        commands.add_parser(name, help=text).add_argument("dir", type=Path)
    commands.choices["up"].add_argument(
        "--real-nodes",
        type=int,
        default=0,
        metavar="N",
        help="also N real nodes (containerd + kubelet each), kube-proxy and CoreDNS",
    )
    reboot = commands.add_parser("reboot", help="reboot one real node of DIR (up --real-nodes)")
    reboot.add_argument("dir", type=Path)
    reboot.add_argument("node", help="real-node-0, real-node-1, ...")
    reboot.add_argument(
        "--grace", type=float, default=30.0, help="seconds between SIGTERM and SIGKILL"
    )
    restart = commands.add_parser("restart", help="stop one component of DIR and start it again")
    restart.add_argument("dir", type=Path)
    restart.add_argument(
        "component", choices=("etcd", "kube-apiserver", "kube-controller-manager", "kwok")
    )
    restart.add_argument("--kill", action="store_true", help="SIGKILL it (a crash), not SIGTERM")
    restart.add_argument(
        "--new-signing-key",
        action="store_true",
        help="kube-apiserver: sign service-account tokens with a new key, dropping the old one",
    )
    return top


def main(argv: list[str]) -> int:
    arguments = parser().parse_args(argv)
    if arguments.command == "build":
        return build(real_nodes=arguments.real_nodes)
    try:
        from tests.support.control_plane import lifecycle
    except ImportError as error:
        print(f"control-plane: {error.name} is missing: run scripts/bootstrap", file=sys.stderr)
        return 2
    if arguments.command == "restart":
        return lifecycle.restart_command(
            arguments.dir.resolve(),
            default_cache(),
            arguments.component,
            kill=arguments.kill,
            new_signing_key=arguments.new_signing_key,
        )
    root = arguments.dir.resolve()
    if arguments.command == "reboot":
        from tests.support.control_plane.real_nodes.reboot import reboot_command

        return reboot_command(root, default_cache(), arguments.node, arguments.grace)
    if arguments.command == "up" and arguments.real_nodes:
        from tests.support.control_plane.real_nodes import cluster

        return cluster.up(root, default_cache(), arguments.real_nodes)
    if arguments.command == "down":
        from tests.support.control_plane.real_nodes import cluster

        return cluster.down(root, default_cache())
    handlers = {"up": lifecycle.up, "status": lifecycle.status}
    return handlers[arguments.command](root, default_cache())


def build(real_nodes: bool = False) -> int:
    """Build what is missing; every failure is one line on stderr, never a traceback."""
    if shutil.which("go") is None:
        print(NO_GO, file=sys.stderr)
        return 2
    try:
        from tests.support.control_plane.build import build_all
        from tests.support.control_plane.real_nodes.build import build_real_nodes
    except ImportError as error:
        print(
            f"control-plane build: {error.name} is missing: run scripts/bootstrap", file=sys.stderr
        )
        return 2
    try:
        (build_real_nodes if real_nodes else build_all)(default_cache())
    except (BuildError, OSError) as error:
        print(f"control-plane build: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("control-plane build: interrupted; rerun to go on", file=sys.stderr)
        return 130
    return 0
