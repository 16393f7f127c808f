"""The kinds of Bottlerocket host the emulator can play (BRUPOP_SIM_HOST_KIND).

* `updatable` (the default): settings readable, updates offered as the simulation says.
* `lockdown`: after `apiclient lockdown` the settings datastore is gone, so `GET /settings`
  answers 500; `/os` and the update API still work.
* `no-updates`: a variant built without in-place updates: no `settings.updates`, the update
  commands answer 500 (no thar-be-updates) and the update status stays uninitialized (404).
* `eol`: a variant at its end of life: everything works, but its repository never offers more.
* `fips`: a FIPS variant: updatable, and its FIPS report shows the FIPS boot mode.
* `fips-lost`: a FIPS host that boots in the standard mode after its first reboot (what the
  agent's post-reboot check must catch).
* `unexpected`: something other than Bottlerocket's API answers the settings read (403).

Every other kind boots in the standard mode: its FIPS report shows FIPS disabled.
"""

from __future__ import annotations

TYPE_CHECKING = False  # keep `typing` out of the emulator's start-up
if TYPE_CHECKING:
    from typing import Any

UPDATABLE = "updatable"
LOCKDOWN = "lockdown"
NO_UPDATES = "no-updates"
EOL = "eol"
FIPS = "fips"
FIPS_LOST = "fips-lost"
UNEXPECTED = "unexpected"
KINDS = (UPDATABLE, LOCKDOWN, NO_UPDATES, EOL, FIPS, FIPS_LOST, UNEXPECTED)

VARIANTS = {
    UPDATABLE: "aws-k8s-1.30",
    LOCKDOWN: "aws-k8s-1.30",
    NO_UPDATES: "aws-dev",
    EOL: "aws-k8s-1.29",
    FIPS: "aws-k8s-1.30-fips",
    FIPS_LOST: "aws-k8s-1.30-fips",
    UNEXPECTED: "aws-k8s-1.30",
}
DATASTORE_MISSING = "Live datastore missing: the host is locked down"
FORBIDDEN = "Forbidden"
NO_UPDATER = "Failed to start thar-be-updates: No such file or directory (os error 2)"
UPDATE_SETTINGS: dict[str, Any] = {
    "updates": {
        "metadata-base-url": "https://updates.bottlerocket.aws/2020-07-07/aws-k8s-1.30/x86_64/",
        "targets-base-url": "https://updates.bottlerocket.aws/targets/",
        "seed": 1234,
        "version-lock": "latest",
        "ignore-waves": False,
    }
}


def settings_answer(kind: str) -> tuple[int, dict[str, Any] | str]:
    """(HTTP status, body) of `GET /settings?prefix=settings.updates` on a host of `kind`."""
    if kind == LOCKDOWN:
        return 500, DATASTORE_MISSING
    if kind == NO_UPDATES:
        return 200, {}
    if kind == UNEXPECTED:
        return 403, FORBIDDEN
    return 200, UPDATE_SETTINGS


def fips_report(kind: str, reboots: int) -> dict[str, Any]:
    """The JSON FIPS report (`GET /report/fips?format=json`) of a host of `kind` that has
    rebooted `reboots` times: its first check says whether the kernel booted in FIPS mode."""
    fips = kind == FIPS or (kind == FIPS_LOST and reboots == 0)
    status = "PASS" if fips else "FAIL"
    check = {
        "name": "fips01000000",
        "id": "1.0",
        "level": 0,
        "title": "The kernel runs in FIPS mode.",
        "mode": "Automatic",
        "status": status,
        "error": "" if fips else "/proc/sys/crypto/fips_enabled is not 1",
    }
    return {
        "level": 0,
        "total": 1,
        "passed": int(fips),
        "skipped": 0,
        "failed": int(not fips),
        "status": status,
        "timestamp": "2026-01-01T00:00:00Z",
        "name": "FIPS Security Policy (emulated)",
        "results": {"fips01000000": check},
    }
