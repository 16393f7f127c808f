"""The controller publishes its concurrency limit, so a dashboard can show the share in use."""

from __future__ import annotations

import pytest

from brupop.entrypoints.controller.container import ControllerContainer
from brupop.entrypoints.controller.settings import load_settings


@pytest.mark.parametrize(
    ("setting", "sample"),
    [
        ("3", "brupop_max_concurrent_update 3.0"),
        ("unlimited", "brupop_max_concurrent_update +Inf"),
    ],
)
def test_the_metrics_carry_max_concurrent_update(
    monkeypatch: pytest.MonkeyPatch, setting: str, sample: str
) -> None:
    monkeypatch.setenv("MY_NODE_NAME", "node-a")
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    monkeypatch.setenv("MAX_CONCURRENT_UPDATE", setting)
    _, config = load_settings()
    lines = ControllerContainer(config=config).prometheus().exposition().decode().splitlines()
    assert sample in lines
