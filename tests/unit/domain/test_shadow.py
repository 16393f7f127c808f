"""Shadow spec/status models: CRD v2 field names and validation."""

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState

# The shadow of the seed's log line (reference: seed-graceful-exit-on-reboot.txt).
SEED_SPEC = {
    "state": "RebootedIntoUpdate",
    "state_transition_timestamp": "2022-06-28T07:12:21.899994323+00:00",
    "version": "1.8.0",
}
SEED_STATUS = {
    "current_version": "1.6.1",
    "target_version": "1.8.0",
    "current_state": "StagedAndPerformedUpdate",
    "crash_count": 0,
    "state_transition_failure_timestamp": None,
}


def test_seed_spec_and_status_parse_and_round_trip_with_the_wire_names() -> None:
    spec = ShadowSpec.model_validate(SEED_SPEC)
    status = ShadowStatus.model_validate(SEED_STATUS)
    assert spec.state is UpdateState.REBOOTED_INTO_UPDATE
    assert spec.state_transition_timestamp == datetime(2022, 6, 28, 7, 12, 21, 899994, tzinfo=UTC)
    assert spec.model_dump(mode="json") == {
        "state": "RebootedIntoUpdate",
        "state_transition_timestamp": "2022-06-28T07:12:21.899994+00:00",
        "version": "1.8.0",
    }
    assert status.model_dump(mode="json") == SEED_STATUS


@pytest.mark.parametrize(
    "version", ["1.8.0", "0.0.0", "10.20.30", "1.0.0-alpha.1", "1.0.0+build.5", "1.0.0-rc.1+b"]
)
def test_good_semver_is_accepted(version: str) -> None:
    assert ShadowSpec(version=version).version == version


@pytest.mark.parametrize("version", ["1.8", "v1.8.0", "01.8.0", "1.8.0-", "1.8.0.1", "", "latest"])
def test_bad_semver_is_rejected(version: str) -> None:
    with pytest.raises(ValidationError):
        ShadowSpec(version=version)
    with pytest.raises(ValidationError):
        ShadowStatus.model_validate({**SEED_STATUS, "current_version": version})


@pytest.mark.parametrize(
    "stamp",
    ["2022-07-09T19:32:38.609610964+00:00", "2022-07-09T19:32:38Z", "2022-07-09T21:32:38+02:00"],
)
def test_rfc3339_timestamps_are_accepted_and_written_in_utc(stamp: str) -> None:
    spec = ShadowSpec.model_validate({"state": "Idle", "state_transition_timestamp": stamp})
    written = spec.model_dump(mode="json")["state_transition_timestamp"]
    assert written.endswith("+00:00")
    assert written.startswith("2022-07-09T19:32:38")


@pytest.mark.parametrize(
    "stamp", ["yesterday", "2022-07-09", "2022-07-09T19:32:38", "2022-13-09T19:32:38Z", "12345"]
)
def test_bad_timestamps_are_rejected(stamp: str) -> None:
    with pytest.raises(ValidationError):
        ShadowSpec.model_validate({"state": "Idle", "state_transition_timestamp": stamp})
    with pytest.raises(ValidationError):
        ShadowStatus.model_validate({**SEED_STATUS, "state_transition_failure_timestamp": stamp})


@pytest.mark.parametrize("state", ["StagedUpdate", "idle", "", "Rebooting"])
def test_unknown_states_are_rejected(state: str) -> None:
    with pytest.raises(ValidationError):
        ShadowSpec.model_validate({"state": state})


@pytest.mark.parametrize("count", [-1, 2**32, "many"])
def test_crash_count_must_be_a_uint32(count: object) -> None:
    with pytest.raises(ValidationError):
        ShadowStatus.model_validate({**SEED_STATUS, "crash_count": count})


def test_spec_defaults_to_idle_without_version_or_timestamp() -> None:
    assert ShadowSpec().model_dump(mode="json") == {
        "state": "Idle",
        "state_transition_timestamp": None,
        "version": None,
    }


def test_shadow_name_is_brs_prefixed_node_name() -> None:
    assert shadow_name("ip-10-0-0-1.ec2.internal") == "brs-ip-10-0-0-1.ec2.internal"


def _shadow(spec: str, status: str | None) -> Shadow:
    return Shadow(
        name="brs-n",
        namespace="ns",
        node_name="n",
        node_uid="u",
        spec=ShadowSpec(state=UpdateState(spec)),
        status=None
        if status is None
        else ShadowStatus.model_validate({**SEED_STATUS, "current_state": status}),
    )


@pytest.mark.parametrize(
    ("spec", "status", "crashed"),
    [
        ("Idle", None, False),
        ("Idle", "Idle", False),
        ("RebootedIntoUpdate", "RebootedIntoUpdate", False),
        ("Idle", "ErrorReset", True),
        ("Idle", "MonitoringUpdate", False),
    ],
)
def test_a_shadow_has_crashed_when_its_agent_reports_error_reset(
    spec: str, status: str | None, crashed: bool
) -> None:
    assert _shadow(spec, status).has_crashed() is crashed
