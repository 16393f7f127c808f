"""Optional package groups (pyproject extras) that a subcommand needs, checked before it loads.

The image the cluster runs installs brupop without extras. `brupop simulate` alone needs `rich`
(its console) and `matplotlib` (its `--timeline` picture); `cryptography`, for the CA of its
loopback apiserver, is a main dependency since local token verification. They come with
`brupop[simulate]`, which `brupop status --timeline` also needs for its picture. Looking the
packages up before importing the subcommand turns a missing one into a line that says what to
install, instead of a ModuleNotFoundError traceback.
"""

from __future__ import annotations

from typing import NamedTuple


class Extra(NamedTuple):
    """One extra: its name in pyproject and the top-level modules its packages provide."""

    name: str
    modules: tuple[str, ...]

    def missing(self) -> list[str]:
        """The extra's modules that cannot be imported here, in declaration order."""
        import importlib.util  # asked for by simulate alone: the agent's start skips it

        return [module for module in self.modules if importlib.util.find_spec(module) is None]

    def install_hint(self) -> str:
        return f"pip install 'brupop[{self.name}]' (scripts/bootstrap installs it)"


SIMULATE = Extra("simulate", ("rich", "matplotlib"))
TIMELINE = Extra("simulate", ("matplotlib",))  # the picture alone, for `brupop status`
