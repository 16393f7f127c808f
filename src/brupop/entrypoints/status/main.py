"""`brupop status [--url URL] [-o table|json]`: ask a controller for every node's row."""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from typing import Any

from brupop.entrypoints.argument_types import seconds_up_to
from brupop.entrypoints.status.table import format_table

DEFAULT_URL = "http://127.0.0.1:8080"
LONGEST_TIMEOUT_SECONDS = 3600.0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="brupop status",
        description="Show every node's update state and why it waits (the controller's view).",
    )
    parser.add_argument(
        "--url",
        default=DEFAULT_URL,
        help=f"the controller's HTTP address (default {DEFAULT_URL}; e.g. through "
        "`kubectl port-forward deploy/brupop-controller-deployment 8080`)",
    )
    parser.add_argument(
        "-o", "--output", choices=("table", "json"), default="table", help="table or json"
    )
    parser.add_argument(
        "--timeout",
        type=seconds_up_to(LONGEST_TIMEOUT_SECONDS),
        default=10.0,
        help=f"seconds to wait for the controller (at most {LONGEST_TIMEOUT_SECONDS:g})",
    )
    return parser


def fetch_status(url: str, timeout: float) -> dict[str, Any]:
    """The controller's `/status` document."""
    with urllib.request.urlopen(url.rstrip("/") + "/status", timeout=timeout) as response:
        document: dict[str, Any] = json.load(response)
    return document


def main(argv: list[str]) -> int:
    """Print the table (or the JSON document); 1 when the controller cannot be reached."""
    args = _parser().parse_args(argv)
    try:
        document = fetch_status(args.url, args.timeout)
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        print(f"brupop status: cannot read {args.url}/status: {reason}", file=sys.stderr)
        return 1
    if args.output == "json":
        print(json.dumps(document, indent=2))
        return 0
    print(format_table(document.get("nodes", [])))
    return 0
