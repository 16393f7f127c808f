"""Checks that depend on each other, so that one cause is told once.

Each check names the checks it needs (the CRDs before the shadows, the apiserver's Deployment
before its webhook, the namespace before anything in it). When one of those did not pass, the
check is not run: it is a SKIP naming the first check that failed, rather than a second FAIL
that blames something else for the same cause.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from brupop.cli.doctor.result import DoctorFinding, skipped


@dataclass(frozen=True)
class Check:
    """One check: its key (what others name in `needs`), its line's name, and how to run it."""

    key: str
    name: str
    run: Callable[[], DoctorFinding]
    needs: tuple[str, ...] = ()


def run_in_order(checks: Iterable[Check]) -> Iterator[DoctorFinding]:
    """Each check's result, in order; a check whose prerequisite failed (and `blocks`) or was
    skipped is skipped.
    A check may need only checks listed before it (KeyError otherwise: a wiring mistake)."""
    done: dict[str, DoctorFinding] = {}
    for check in checks:
        cause = next((done[k] for k in check.needs if not done[k].ok and done[k].blocks), None)
        result = check.run() if cause is None else skipped(check.name, cause)
        done[check.key] = result
        yield result
