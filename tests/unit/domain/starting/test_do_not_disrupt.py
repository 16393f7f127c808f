"""Karpenter's duration form of `karpenter.sh/do-not-disrupt`: a blocking pod with an end."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brupop.domain.cluster.objects import Pod
from brupop.domain.reason import Reason
from brupop.domain.starting.autoscaler_holds import BlockingPodRule
from brupop.domain.starting.do_not_disrupt import (
    NONE,
    WITHOUT_END,
    Protection,
    duration_seconds,
    protection,
)
from brupop.domain.starting.start_holds import StartCandidate, StartHold

CREATED = datetime(2026, 1, 5, 8, 0, 0, tzinfo=UTC)
KEY = "karpenter.sh/do-not-disrupt"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("4h", 14400), ("1h30m", 5400), ("1.5h", 5400), ("30m", 1800), ("90s", 90), ("-1h", -3600),
     ("250ms", 0.25), ("0", 0)],
)  # fmt: skip
def test_go_durations_are_read(text: str, seconds: float) -> None:
    assert duration_seconds(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "4", "h", "4d", "1h 30m", "four hours", "1e3h", "true"])
def test_what_is_not_a_go_duration_is_none(text: str) -> None:
    assert duration_seconds(text) is None


def test_true_protects_without_end_and_a_duration_until_that_long_after_creation() -> None:
    assert protection("true", CREATED) == WITHOUT_END
    assert protection("4h", CREATED) == Protection(True, CREATED + timedelta(hours=4))
    assert protection("4h", None) == WITHOUT_END  # no creation time: no end known


@pytest.mark.parametrize("value", [None, "false", "no", "0s", "-4h", "soon"])
def test_other_values_protect_nothing(value: str | None) -> None:
    assert protection(value, CREATED) == NONE


@given(st.text(max_size=80))
def test_any_annotation_value_gives_a_protection_never_an_error(value: str) -> None:
    found = protection(value, CREATED)
    assert found.until is None or found.until > CREATED


class _Pods:
    def __init__(self, pods: Sequence[Pod]) -> None:
        self._pods = pods

    def __call__(self, node_name: str) -> Sequence[Pod] | None:
        return self._pods


def _hold_at(now: datetime, value: str) -> StartHold | None:
    pod = Pod("job-0", "ci", "uid", "node-01", annotations={KEY: value}, created_at=CREATED)
    candidate = StartCandidate("brs-node-01", "node-01", "1.20.0", None)
    return BlockingPodRule(_Pods([pod])).hold(candidate, now)


def test_a_pod_protected_for_4h_holds_its_node_until_then_naming_the_end() -> None:
    hold = _hold_at(CREATED + timedelta(hours=3), "4h")

    assert hold is not None
    assert hold.reason is Reason.BLOCKING_POD
    assert hold.until == CREATED + timedelta(hours=4)
    assert hold.detail == 'pod ci/job-0 has karpenter.sh/do-not-disrupt "4h"'


def test_a_pod_whose_protection_has_ended_no_longer_holds_its_node() -> None:
    assert _hold_at(CREATED + timedelta(hours=4), "4h") is None
