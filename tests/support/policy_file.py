"""A BottlerocketUpdatePolicy written to a file, as `brupop simulate --policy` reads it."""

from __future__ import annotations

from pathlib import Path


def write_policy_file(directory: Path, spec: str) -> str:
    """The path of a `default` policy whose spec is the given YAML (already indented by two)."""
    path = directory / "policy.yaml"
    path.write_text(
        "apiVersion: brupop.bottlerocket.aws/v1\nkind: BottlerocketUpdatePolicy\n"
        f"metadata:\n  name: default\nspec:\n{spec}",
        encoding="utf-8",
    )
    return str(path)
