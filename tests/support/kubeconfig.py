"""A kubeconfig file for the API emulator, as kubectl would have it on a laptop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


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


def use_kubeconfig(
    monkeypatch: pytest.MonkeyPatch, path: Path, server_url: str, token: str = "admin-token"
) -> Path:
    """Write a kubeconfig for `server_url` to `path` and point $KUBECONFIG at it, outside a pod
    (no KUBERNETES_SERVICE_HOST), so a command loads it as kubectl would."""
    write_kubeconfig(path, server_url, token)
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return path
