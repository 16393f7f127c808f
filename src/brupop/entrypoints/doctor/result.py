"""One check's outcome, and the one line `brupop doctor` prints for it."""

from __future__ import annotations

from dataclasses import dataclass

from brupop.domain.printable import printable


@dataclass(frozen=True)
class CheckResult:
    """What a check found: `ok`, what it saw (`detail`) and, on a failure, what to do."""

    name: str
    ok: bool
    detail: str
    advice: str = ""

    def line(self) -> str:
        """`PASS crds: ...` or `FAIL crds: ... - do: ...`, with cluster text made printable."""
        mark = "PASS" if self.ok else "FAIL"
        text = f"{mark} {self.name}: {self.detail}"
        if not self.ok and self.advice:
            text += f" - do: {self.advice}"
        return printable(text)


def passed(name: str, detail: str) -> CheckResult:
    """A check that passed."""
    return CheckResult(name, True, detail)


def failed(name: str, detail: str, advice: str) -> CheckResult:
    """A check that failed, with what to do about it."""
    return CheckResult(name, False, detail, advice)
