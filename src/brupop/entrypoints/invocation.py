"""How every brupop process begins: the exit codes they share, and the one opening of `main()`.

`brupop agent`, `brupop controller` and `brupop apiserver` take no arguments: `-h`/`--help`
prints the usage (exit 0); anything else is refused with the usage on stderr (exit 2, as a bad
setting is). Standard library only: `brupop` loads it before the agent's provisional SIGTERM
handler is in place.
"""

from __future__ import annotations

import sys

EXIT_OK = 0
EXIT_FATAL = 1
EXIT_BAD_SETTINGS = 2
"""A bad setting or argument: the process refused to start."""


def answer_arguments(process: str, argv: list[str], usage: str) -> int | None:
    """The exit code when the arguments end the process (help, or refused); None: run it."""
    if not argv:
        return None
    if argv[0] in ("-h", "--help"):
        print(usage.rstrip())
        return EXIT_OK
    noun = "argument" if len(argv) == 1 else "arguments"
    unexpected = " ".join(repr(argument) for argument in argv)
    print(f"brupop {process}: unexpected {noun} {unexpected}\n\n{usage.rstrip()}", file=sys.stderr)
    return EXIT_BAD_SETTINGS
