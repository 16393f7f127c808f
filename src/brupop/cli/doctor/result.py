"""One check's outcome, and the one line `brupop doctor` prints for it: PASS, FAIL, or SKIP
when a check it depends on did not pass (its reason names that check)."""

from __future__ import annotations

from dataclasses import dataclass

from brupop.domain.printable import printable


@dataclass(frozen=True)
class DoctorFinding:
    """What a check found: `ok`, what it saw (`detail`) and, on a failure, what to do."""

    name: str
    ok: bool
    detail: str
    advice: str = ""
    skipped: bool = False
    """Not run: a check it depends on did not pass (`detail` says which)."""
    blocks: bool = True
    """A failure stops the checks that need this one (False: what they need is there, as a
    CRD installed with another version list)."""

    def line(self) -> str:
        """`PASS crds: ...`, `FAIL crds: ... - do: ...` or `SKIP ...: needs ...`, with cluster
        text made printable."""
        mark = "SKIP" if self.skipped else "PASS" if self.ok else "FAIL"
        text = f"{mark} {self.name}: {self.detail}"
        if not self.ok and not self.skipped and self.advice:
            text += f" - do: {self.advice}"
        return printable(text)


def passed(name: str, detail: str) -> DoctorFinding:
    """A check that passed."""
    return DoctorFinding(name, True, detail)


def failed(name: str, detail: str, advice: str, *, blocks: bool = True) -> DoctorFinding:
    """A check that failed, with what to do about it (`blocks`: its dependants are skipped)."""
    return DoctorFinding(name, False, detail, advice, blocks=blocks)


def skipped(name: str, cause: DoctorFinding) -> DoctorFinding:
    """A check not run because `cause`, a check it depends on, did not pass; a skip caused by
    a skip names the first check that failed."""
    reason = cause.detail if cause.skipped else f"needs {cause.name}, which failed"
    return DoctorFinding(name, False, reason, skipped=True)
