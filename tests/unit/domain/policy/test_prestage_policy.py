"""The policy's prestage section: off unless asked for, bounded, and refused naming the field."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from brupop.domain.policy.update_policy import UpdatePolicySpec


def test_a_policy_without_prestage_prestages_nothing() -> None:
    assert UpdatePolicySpec.model_validate({}).prestage is None


def test_an_empty_prestage_section_takes_the_documented_defaults_and_stays_off() -> None:
    prestage = UpdatePolicySpec.model_validate({"prestage": {}}).prestage
    assert prestage is not None
    assert (prestage.enabled, prestage.max_concurrent, prestage.start_before_seconds) == (
        False,
        2,
        86_400,
    )


def test_a_written_prestage_section_reads_back_from_its_wire_form() -> None:
    wire = {"enabled": True, "maxConcurrent": 3, "startBeforeSeconds": 3600}
    spec = UpdatePolicySpec.model_validate({"prestage": wire})
    assert spec.model_dump(mode="json")["prestage"] == wire


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("maxConcurrent", 0),
        ("maxConcurrent", -1),
        ("startBeforeSeconds", -1),
        ("startBeforeSeconds", 30 * 86_400 + 1),
        ("enabled", "yes"),
    ],
)
def test_a_bad_prestage_value_is_refused_naming_its_field(field: str, value: object) -> None:
    with pytest.raises(ValidationError) as refused:
        UpdatePolicySpec.model_validate({"prestage": {field: value}})
    (error,) = refused.value.errors()
    assert error["loc"] == ("prestage", field)


def test_thirty_days_ahead_is_the_longest_accepted() -> None:
    spec = UpdatePolicySpec.model_validate({"prestage": {"startBeforeSeconds": 30 * 86_400}})
    assert spec.prestage is not None and spec.prestage.start_before_seconds == 2_592_000
