"""Where a simulation serves: `<work dir>/endpoints.json`, written as soon as the apiserver and
the controller listen (and again when a scenario restarts the controller on a new port).

Both take free loopback ports, so a tool watching the run (a Prometheus scraping the two
`/metrics`, `brupop status --url`) reads them here:
`{"apiserver": "https://127.0.0.1:P", "controller": "http://127.0.0.1:Q", "ca_file": "..."}`.
The apiserver's certificate is signed by the CA in `ca_file`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

ENDPOINTS_FILE = "endpoints.json"


@dataclass(frozen=True)
class Endpoints:
    """The base URLs of the simulation's apiserver and controller, and the apiserver's CA."""

    apiserver: str
    controller: str
    ca_file: Path

    def as_json(self) -> dict[str, str]:
        return {
            "apiserver": self.apiserver,
            "controller": self.controller,
            "ca_file": str(self.ca_file),
        }


def write_endpoints(work_dir: Path, endpoints: Endpoints) -> Path:
    """Replace `work_dir/endpoints.json` in one step, so a reader never sees half of it."""
    target = work_dir / ENDPOINTS_FILE
    partial = work_dir / f".{ENDPOINTS_FILE}.partial"
    partial.write_text(json.dumps(endpoints.as_json(), indent=2) + "\n", encoding="utf-8")
    os.replace(partial, target)
    return target
