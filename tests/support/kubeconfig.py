"""A kubeconfig file for the API emulator, as kubectl would have it on a laptop."""

from __future__ import annotations

import json
from pathlib import Path


def write_kubeconfig(path: Path, server_url: str, token: str = "admin-token") -> Path:
    """Write a one-context kubeconfig for `server_url` to `path` and return the path."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "emulated", "cluster": {"server": server_url}}],
        "users": [{"name": "admin", "user": {"token": token}}],
        "contexts": [{"name": "laptop", "context": {"cluster": "emulated", "user": "admin"}}],
        "current-context": "laptop",
    }
    path.write_text(json.dumps(config))
    return path
