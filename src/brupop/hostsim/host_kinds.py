"""The kinds of Bottlerocket host the emulator can play (BRUPOP_SIM_HOST_KIND).

* `updatable` (the default): settings readable, updates offered as the simulation says.
* `lockdown`: after `apiclient lockdown` the settings datastore is gone, so `GET /settings`
  answers 500; `/os` and the update API still work.
* `no-updates`: a variant built without in-place updates: no `settings.updates`, the update
  commands answer 500 (no thar-be-updates) and the update status stays uninitialized (404).
* `eol`: a variant at its end of life: everything works, but its repository never offers more.
"""

from __future__ import annotations

TYPE_CHECKING = False  # keep `typing` out of the emulator's start-up
if TYPE_CHECKING:
    from typing import Any

UPDATABLE = "updatable"
LOCKDOWN = "lockdown"
NO_UPDATES = "no-updates"
EOL = "eol"
KINDS = (UPDATABLE, LOCKDOWN, NO_UPDATES, EOL)

VARIANTS = {
    UPDATABLE: "aws-k8s-1.30",
    LOCKDOWN: "aws-k8s-1.30",
    NO_UPDATES: "aws-dev",
    EOL: "aws-k8s-1.29",
}
DATASTORE_MISSING = "Live datastore missing: the host is locked down"
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
    return 200, UPDATE_SETTINGS
