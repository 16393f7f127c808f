"""The CRD's schemas accept real-shaped shadows and refuse what the kube-apiserver must refuse."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brupop.domain.conversion import convert_object
from brupop.domain.shadow import API_VERSION_V1, API_VERSION_V2, KIND, ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState
from tests.deploy.shadow_schema import problems

# The shadow printed in the seed's agent log (the reboot of 2022-06-28), in its wire form.
# That log is a Rust Debug print and reads `StagedAndPerformUpdate`, a state name no brupop
# release ever had; the wire value of that state is `StagedAndPerformedUpdate`.
SEED_SHADOW: dict[str, Any] = {
    "apiVersion": API_VERSION_V2,
    "kind": KIND,
    "metadata": {
        "creationTimestamp": "2022-06-28T07:05:04Z",
        "generation": 3,
        "name": "brs-ip-192-168-141-69.us-west-2.compute.internal",
        "namespace": "brupop-bottlerocket-aws",
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "Node",
                "name": "ip-192-168-141-69.us-west-2.compute.internal",
                "uid": "e77d33d5-2f4f-491e-9755-cb9ee36545b7",
            }
        ],
        "resourceVersion": "14629549",
        "uid": "391f21d1-b22a-4c88-a1d5-efa73293fad3",
        "managedFields": [
            {
                "apiVersion": API_VERSION_V2,
                "fieldsType": "FieldsV1",
                "manager": "unknown",
                "operation": "Update",
                "time": "2022-06-28T07:05:24Z",
            }
        ],
    },
    "spec": {
        "state": "RebootedIntoUpdate",
        "state_transition_timestamp": "2022-06-28T07:12:21.899994323+00:00",
        "version": "1.8.0",
    },
    "status": {
        "current_version": "1.6.1",
        "target_version": "1.8.0",
        "current_state": "StagedAndPerformedUpdate",
        "crash_count": 0,
        "state_transition_failure_timestamp": None,
    },
}


def _shadow(spec: ShadowSpec, status: ShadowStatus | None) -> dict[str, Any]:
    """A shadow as brupop writes it: the models' JSON under the object envelope."""
    return {
        "apiVersion": API_VERSION_V2,
        "kind": KIND,
        "metadata": {"name": "brs-node-a", "namespace": "brupop-bottlerocket-aws"},
        "spec": spec.model_dump(mode="json"),
        "status": None if status is None else status.model_dump(mode="json"),
    }


def _changed(path: str, value: object) -> dict[str, Any]:
    """The seed shadow with the field at dotted `path` set to `value` (or removed: ...)."""
    shadow = copy.deepcopy(SEED_SHADOW)
    *parents, last = path.split(".")
    target = shadow
    for key in parents:
        target = target[key]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return shadow


def test_the_seed_shadow_fits_the_v2_schema_with_nothing_pruned() -> None:
    assert problems(SEED_SHADOW, strict=True) == []


def test_the_state_name_printed_in_the_seed_log_is_not_a_wire_state() -> None:
    assert problems(_changed("status.current_state", "StagedAndPerformUpdate")) != []


def test_a_new_shadow_as_the_apiserver_creates_it_fits() -> None:
    assert problems(_shadow(ShadowSpec(), None), strict=True) == []


def test_every_step_of_a_rollout_with_a_failure_fits() -> None:
    start = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
    failed = ShadowStatus(
        current_version="1.19.2",
        target_version="1.20.0",
        current_state=UpdateState.ERROR_RESET,
        crash_count=1,
        state_transition_failure_timestamp=start,
    )
    assert problems(_shadow(ShadowSpec(), failed), strict=True) == []
    state, current = UpdateState.IDLE, "1.19.2"
    for step in range(5):
        when = start + timedelta(minutes=step)
        desired = ShadowSpec(
            state=state.on_success(), state_transition_timestamp=when, version="1.20.0"
        )
        if state is UpdateState.REBOOTED_INTO_UPDATE:
            current = "1.20.0"
        status = ShadowStatus(
            current_version=current, target_version="1.20.0", current_state=state, crash_count=1
        )
        assert problems(_shadow(desired, status), strict=True) == []
        state = state.on_success()


_VERSIONS = st.builds(
    lambda major, minor, patch, pre: f"{major}.{minor}.{patch}{pre}",
    st.integers(0, 99),
    st.integers(0, 99),
    st.integers(0, 99),
    st.sampled_from(["", "-rc.1", "-alpha", "+build.7", "-beta.2+sha.1a2b"]),
)
_MOMENTS = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)
_SPECS = st.builds(
    ShadowSpec,
    state=st.sampled_from(UpdateState),
    state_transition_timestamp=st.none() | _MOMENTS,
    version=st.none() | _VERSIONS,
)
_STATUSES = st.builds(
    ShadowStatus,
    current_version=_VERSIONS,
    target_version=_VERSIONS,
    current_state=st.sampled_from(UpdateState),
    crash_count=st.integers(0, 2**32 - 1),
    state_transition_failure_timestamp=st.none() | _MOMENTS,
)


@given(spec=_SPECS, status=st.none() | _STATUSES)
def test_any_shadow_the_models_can_write_fits_the_v2_schema(
    spec: ShadowSpec, status: ShadowStatus | None
) -> None:
    assert problems(_shadow(spec, status), strict=True) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("spec.state", "Rebooting"),
        ("spec.state", "StagedUpdate"),
        ("status.current_state", "PerformedUpdate"),
        ("spec.state", None),
        ("spec.version", "1.8"),
        ("spec.version", "v1.8.0"),
        ("status.current_version", "1.6.1.0"),
        ("status.target_version", "01.8.0"),
        ("status.target_version", None),
        ("status.crash_count", -1),
        ("status.crash_count", 2**32),
        ("status.crash_count", "0"),
        ("status.crash_count", 1.5),
        ("spec.state_transition_timestamp", 1656400341),
        ("spec.state", ...),
        ("status.crash_count", ...),
        ("status.current_version", ...),
        ("spec", ...),
    ],
)
def test_bad_states_versions_and_counts_are_refused(path: str, value: object) -> None:
    assert problems(_changed(path, value)) != []


def test_the_v1_schema_takes_v1_states_and_refuses_the_v2_only_error_reset() -> None:
    v1_shadow = _changed("status", {"current_version": "1.6.1", "target_version": "1.8.0"})
    v1_shadow["apiVersion"] = API_VERSION_V1
    v1_shadow["spec"]["state"] = "StagedUpdate"
    v1_shadow["status"]["current_state"] = "PerformedUpdate"
    assert problems(v1_shadow, "v1", strict=True) == []
    v1_shadow["spec"]["state"] = "ErrorReset"
    assert problems(v1_shadow, "v1") != []


def test_a_crash_count_is_a_field_v1_would_prune() -> None:
    v1_shadow = copy.deepcopy(SEED_SHADOW)
    v1_shadow["spec"]["state"] = "RebootedIntoUpdate"
    v1_shadow["status"]["current_state"] = "StagedUpdate"
    assert problems(v1_shadow, "v1") == []
    assert problems(v1_shadow, "v1", strict=True) != []


@given(spec=_SPECS, status=st.none() | _STATUSES)
def test_what_the_conversion_webhook_returns_fits_the_schema_of_its_version(
    spec: ShadowSpec, status: ShadowStatus | None
) -> None:
    v2 = _shadow(spec, status)
    v1 = convert_object(v2, API_VERSION_V1)
    assert problems(v1, "v1", strict=True) == []
    assert problems(convert_object(v1, API_VERSION_V2), strict=True) == []


def test_the_seed_shadow_converts_to_a_v1_object_the_v1_schema_accepts() -> None:
    v1 = convert_object(SEED_SHADOW, API_VERSION_V1)
    assert problems(v1, "v1", strict=True) == []
