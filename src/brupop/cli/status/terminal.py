"""What `brupop status` prints: every line passes through `printable_lines`, since nearly all of
it (REASONs, the policy's message, versions, errors) came from the cluster, and a hostile
answer must not drive the terminal (retitle it, write the clipboard, overwrite a line)."""

from __future__ import annotations

import sys
from typing import TextIO

from brupop.domain.printable import printable, printable_lines


def show(text: str, stream: TextIO | None = None) -> None:
    """Print `text` (to stdout by default) with its terminal controls taken out."""
    print(printable_lines(text), file=stream if stream is not None else sys.stdout)


def complain(text: str) -> None:
    """Print `text` to stderr, its terminal controls taken out."""
    show(text, sys.stderr)


def printable_document(value: object) -> object:
    """A JSON document (as `json.loads` gives it) with every string in it, keys included, made
    printable, so that `jq -r` cannot bring a control back either."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, list):
        return [printable_document(item) for item in value]
    if isinstance(value, dict):
        return {printable(str(key)): printable_document(item) for key, item in value.items()}
    return value
