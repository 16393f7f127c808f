"""What a failed `go` command said, and whether it is worth retrying: a network or module-proxy
hiccup (a TLS handshake timeout, a reset connection, an i/o timeout, a 5xx from the proxy) is;
a missing module or a compile error is not, since a rerun fails the same way."""

from __future__ import annotations

import re
from pathlib import Path

# go prints these for a network failure (net/http, net) or a proxy answering 5xx, e.g.
# `reading https://proxy.golang.org/k8s.io/api/@v/v0.37.2.mod: 502 Bad Gateway`.
TRANSIENT = re.compile(
    r"TLS handshake timeout"
    r"|connection reset by peer"
    r"|i/o timeout"
    r"|timeout awaiting response headers"
    r"|reading https?://\S+: 5\d\d\b",
)
NOISE = ("go: downloading", "go: finding", "go: added", "go: upgraded", "go: found")
HEADLINE_CHARACTERS = 300
VALUED_FLAGS = frozenset({"-o", "-ldflags"})


class BuildError(Exception):
    """The build cannot go on; the message is one line for the user."""


def is_transient(output: str) -> bool:
    return TRANSIENT.search(output) is not None


def headline(output: str) -> str:
    """The one line of go's output that says what went wrong: the network error when there is
    one, else the first line that is not progress or a `# package` header."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    chosen = next((line for line in lines if TRANSIENT.search(line)), None)
    if chosen is None:
        errors = (line for line in lines if not line.startswith(("#", *NOISE)))
        chosen = next(errors, "(go printed nothing)")
    return chosen[:HEADLINE_CHARACTERS]


def short_command(args: tuple[str, ...]) -> str:
    """`go build k8s.io/kubernetes/cmd/kube-apiserver`: the command without its flags."""
    words: list[str] = []
    skip_value = False
    for arg in args:
        if skip_value:
            skip_value = False
        elif arg in VALUED_FLAGS:
            skip_value = True
        elif not arg.startswith("-"):
            words.append(arg)
    return " ".join(["go", *words])


class GoError(BuildError):
    """A go command exited non-zero: what it was, what it said, and where the full log is."""

    def __init__(self, args: tuple[str, ...], output: str, log: Path) -> None:
        self.command = short_command(args)
        self.output = output
        self.log = log
        self.transient = is_transient(output)
        super().__init__(f"`{self.command}` failed: {headline(output)} (full output: {log})")


class NetworkGaveUp(BuildError):
    """A network error that outlasted every retry."""

    def __init__(self, error: GoError, retries: int) -> None:
        super().__init__(
            f"`{error.command}` failed with a network error {retries + 1} times: "
            f"{headline(error.output)}; the module proxy or the network is failing, rerun "
            f"later (full output: {error.log})"
        )
