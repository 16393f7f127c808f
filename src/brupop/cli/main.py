"""The `brupop` command: one executable, one subcommand per process.

Each subcommand's module is imported only when chosen, so `brupop agent` never loads the
controller's or apiserver's dependencies.
"""

from __future__ import annotations

import importlib
import os
import select
import sys

from brupop.cli.program_name import called_as
from brupop.entrypoints import early_stop
from brupop.entrypoints.invocation import EXIT_BAD_SETTINGS, EXIT_OK

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from brupop.cli.extras import Extra

_SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "agent": ("brupop.entrypoints.agent.main", "run the node agent (DaemonSet)"),
    "apiserver": ("brupop.entrypoints.apiserver.main", "run the agents' HTTPS apiserver"),
    "controller": ("brupop.entrypoints.controller.main", "run the rollout controller"),
    "simulate": ("brupop.simulation.main", "roll a simulated fleet on this machine"),
    "status": ("brupop.cli.status.main", "show every node's update state and why it waits"),
    "plan": ("brupop.cli.plan.main", "show the order and times a rollout will take"),
    "pause": ("brupop.cli.pausing.pause", "stop node updates from starting (--node: one)"),
    "resume": ("brupop.cli.pausing.resume", "clear a pause or halt (--node: one node)"),
    "crd": ("brupop.cli.crd.main", "print the CRDs (shadow and update policy)"),
    "doctor": ("brupop.cli.doctor.main", "check a live install, one line per check"),
    "policy": ("brupop.cli.policy.main", "lint: the policy's rules that do nothing here"),
}

EXIT_STDOUT_CLOSED = 141
"""The reader of stdout went away (`| head`): what a shell reports for a death by SIGPIPE."""

# Subcommands whose packages the image leaves out (see `extras`), by the name of their extra
# there: `extras` (typing, a NamedTuple) and `near_miss` are imported only when they are needed,
# which the agent's start never is.
_NEEDS: dict[str, str] = {"simulate": "SIMULATE"}


def command_names() -> tuple[str, ...]:
    """The subcommands, in the order `--help` lists them."""
    return tuple(_SUBCOMMANDS)


def _usage(prog: str = "brupop") -> str:
    lines = [f"usage: {prog} <command> [options] | --version", "", "commands:"]
    lines += [f"  {name:<11} {help_}" for name, (_, help_) in _SUBCOMMANDS.items()]
    return "\n".join(lines)


def _print_usage(prog: str) -> None:
    """The usage on stdout; a reader that stops early (`| head`) is not an error."""
    try:
        print(_usage(prog), flush=True)
    except BrokenPipeError:
        _discard_stdout()


def _stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has gone (poll reports an error on it)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return True  # no poll here: believe the error


def _discard_stdout() -> None:
    """Send what is left of stdout nowhere: its reader is gone (`| head`), and the flush at
    exit would otherwise complain about the closed pipe."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _version() -> str:
    """The installed package's version (pyproject.toml's), read only when asked for."""
    from importlib.metadata import version

    return version("brupop")


def main(argv: list[str] | None = None, prog: str = "brupop") -> int:
    """Dispatch to the chosen subcommand's `main(argv)` and return its exit code."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        _print_usage(prog)
        return EXIT_OK if args else EXIT_BAD_SETTINGS
    if args[0] == "--version":
        print(f"brupop {_version()}")
        return EXIT_OK
    name, rest = args[0], args[1:]
    if name not in _SUBCOMMANDS:
        from brupop.cli.near_miss import did_you_mean

        hint = did_you_mean(name, _SUBCOMMANDS)
        print(f"{prog}: unknown command {name!r}{hint}\nsee `{prog} --help`", file=sys.stderr)
        return EXIT_BAD_SETTINGS
    if name in _NEEDS and (missing := (extra := _extra(name)).missing()):
        print(
            f"brupop {name}: needs {', '.join(missing)}, from the '{extra.name}' extra: "
            f"{extra.install_hint()}",
            file=sys.stderr,
        )
        return EXIT_BAD_SETTINGS
    if name == "agent":
        early_stop.install()  # before the agent's imports, which take a moment
    try:
        module = importlib.import_module(_SUBCOMMANDS[name][0])
    except ModuleNotFoundError as missing:
        if (missing.name or "brupop").split(".")[0] == "brupop":
            raise  # a module of ours missing is a broken install: let it be seen
        print(
            f"brupop {name}: this installation lacks {missing.name!r}, which {name} needs "
            f"(the agent image holds the agent alone: run {name} from the control image)",
            file=sys.stderr,
        )
        return EXIT_BAD_SETTINGS
    try:
        with called_as(prog):
            code: int = module.main(rest)
            sys.stdout.flush()
    except BrokenPipeError:
        if not _stdout_closed():
            raise  # a pipe of the command's own: a bug to see, not a reader gone
        _discard_stdout()  # the reader stopped early (`brupop doctor | head -1`)
        return EXIT_STDOUT_CLOSED
    if name == "agent":
        early_stop.ignore_from_now()  # whatever ended it, a late SIGTERM must not change its code
    return code


def _extra(name: str) -> Extra:
    """The extra that subcommand `name` needs (one of `_NEEDS`)."""
    from brupop.cli import extras

    needed: Extra = getattr(extras, _NEEDS[name])
    return needed


def kubectl_plugin() -> int:
    """`kubectl brupop ...`: kubectl finds `kubectl-brupop` on PATH (krew's naming) and passes
    it the words after `brupop`; the same commands, introduced under kubectl's name."""
    return main(sys.argv[1:], prog="kubectl brupop")


if __name__ == "__main__":
    sys.exit(main())
