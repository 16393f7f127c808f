"""The `brupop` command: one executable, one subcommand per process.

Each subcommand's module is imported only when chosen, so `brupop agent` never loads the
controller's or apiserver's dependencies.
"""

from __future__ import annotations

import importlib
import sys

from brupop.entrypoints import early_stop
from brupop.entrypoints.extras import SIMULATE, Extra
from brupop.entrypoints.invocation import EXIT_BAD_SETTINGS, EXIT_OK

_SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "agent": ("brupop.entrypoints.agent.main", "run the node agent (DaemonSet)"),
    "apiserver": ("brupop.entrypoints.apiserver.main", "run the agents' HTTPS apiserver"),
    "controller": ("brupop.entrypoints.controller.main", "run the rollout controller"),
    "simulate": ("brupop.entrypoints.simulate.main", "roll a simulated fleet on this machine"),
    "status": ("brupop.entrypoints.status.main", "show every node's update state and why it waits"),
    "plan": ("brupop.entrypoints.plan.main", "show the order and times a rollout will take"),
    "pause": ("brupop.entrypoints.pausing.pause", "stop node updates from starting (--node: one)"),
    "resume": ("brupop.entrypoints.pausing.resume", "clear a pause or halt (--node: one node)"),
    "crd": ("brupop.entrypoints.crd.main", "print the CRDs (shadow and update policy)"),
}

# Subcommands whose packages the image leaves out (see `extras`).
_NEEDS: dict[str, Extra] = {"simulate": SIMULATE}


def _usage() -> str:
    lines = ["usage: brupop <command> [options] | --version", "", "commands:"]
    lines += [f"  {name:<11} {help_}" for name, (_, help_) in _SUBCOMMANDS.items()]
    return "\n".join(lines)


def _version() -> str:
    """The installed package's version (pyproject.toml's), read only when asked for."""
    from importlib.metadata import version

    return version("brupop")


def main(argv: list[str] | None = None) -> int:
    """Dispatch to the chosen subcommand's `main(argv)` and return its exit code."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return EXIT_OK if args else EXIT_BAD_SETTINGS
    if args[0] == "--version":
        print(f"brupop {_version()}")
        return EXIT_OK
    name, rest = args[0], args[1:]
    if name not in _SUBCOMMANDS:
        print(f"brupop: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return EXIT_BAD_SETTINGS
    extra = _NEEDS.get(name)
    if extra is not None and (missing := extra.missing()):
        print(
            f"brupop {name}: needs {', '.join(missing)}, from the '{extra.name}' extra: "
            f"{extra.install_hint()}",
            file=sys.stderr,
        )
        return EXIT_BAD_SETTINGS
    if name == "agent":
        early_stop.install()  # before the agent's imports, which take a moment
    module = importlib.import_module(_SUBCOMMANDS[name][0])
    code: int = module.main(rest)
    if name == "agent":
        early_stop.ignore_from_now()  # whatever ended it, a late SIGTERM must not change its code
    return code


if __name__ == "__main__":
    sys.exit(main())
