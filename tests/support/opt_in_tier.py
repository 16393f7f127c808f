"""A test folder that runs only when asked for by path (the real-cluster and real-node tiers)."""

from __future__ import annotations

from pathlib import Path

import pytest


def leave_out_unless_named(folder: Path, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect `folder`'s tests unless the command line named it or something inside it."""
    if any(_named(folder, argument) for argument in config.args):
        return
    ours = [item for item in items if folder in Path(str(item.path)).parents]
    if ours:
        config.hook.pytest_deselected(items=ours)
        items[:] = [item for item in items if item not in ours]


def _named(folder: Path, argument: str) -> bool:
    path = Path(argument.split("::", 1)[0]).resolve()
    return path == folder or folder in path.parents
