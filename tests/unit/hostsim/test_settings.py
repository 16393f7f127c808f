"""The emulator's environment contract: a missing host dir or a bad value names the variable."""

from __future__ import annotations

import pytest

from brupop.hostsim.settings import SimSettingError, load_settings


def test_defaults_need_only_the_host_dir() -> None:
    settings = load_settings({"BRUPOP_SIM_HOST_DIR": "/tmp/h"})

    assert settings.current_version == "1.0.0" and settings.target_version is None
    assert settings.reboot_kills == "parent-and-self"
    assert 0 < settings.refresh_seconds <= 1 and 0 < settings.prepare_seconds <= 1
    assert not settings.faults.any_call_fault() and not settings.faults.failing_commands


def test_a_missing_host_dir_is_named() -> None:
    with pytest.raises(SimSettingError, match="BRUPOP_SIM_HOST_DIR is not set"):
        load_settings({})


def test_faults_are_read_from_their_variables() -> None:
    faults = load_settings(
        {
            "BRUPOP_SIM_HOST_DIR": "/tmp/h",
            "BRUPOP_SIM_FAULT_REFRESH_FAILS": "true",
            "BRUPOP_SIM_FAULT_PREPARE_FAILS": "1",
            "BRUPOP_SIM_FAULT_SILENT_EXIT": "7",
            "BRUPOP_SIM_FAULT_ON_URIS": "/os, /updates/status",
            "BRUPOP_SIM_FAULT_TIMES": "3",
            "BRUPOP_SIM_FAULT_AFTER": "2",
        }
    ).faults

    assert faults.failing_commands == {"refresh", "prepare"}
    assert faults.silent_exit_code == 7 and faults.times == 3 and faults.after == 2
    assert faults.applies_to("/os") and not faults.applies_to("/actions/reboot")


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("BRUPOP_SIM_TARGET_VERSION", "latest"),
        ("BRUPOP_SIM_REFRESH_SECONDS", "soon"),
        ("BRUPOP_SIM_ACTIVATE_SECONDS", "nan"),
        ("BRUPOP_SIM_FAULT_SILENT_EXIT", "300"),
        ("BRUPOP_SIM_FAULT_TIMES", "-1"),
        ("BRUPOP_SIM_FAULT_AFTER", "one"),
        ("BRUPOP_SIM_FAULT_GARBAGE_STDOUT", "2"),
    ],
)
def test_a_bad_value_names_its_variable(variable: str, value: str) -> None:
    with pytest.raises(SimSettingError, match=f"^{variable}: "):
        load_settings({"BRUPOP_SIM_HOST_DIR": "/tmp/h", variable: value})


HOST_NUMBERS = (
    "BRUPOP_SIM_REFRESH_SECONDS",
    "BRUPOP_SIM_PREPARE_SECONDS",
    "BRUPOP_SIM_ACTIVATE_SECONDS",
    "BRUPOP_SIM_FAULT_HANG_SECONDS",
    "BRUPOP_SIM_FAULT_SILENT_EXIT",
    "BRUPOP_SIM_FAULT_TIMES",
    "BRUPOP_SIM_FAULT_AFTER",
)


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e12", "1000000000000", "-1"])
@pytest.mark.parametrize("variable", HOST_NUMBERS)
def test_an_unbounded_number_is_refused_naming_its_variable(variable: str, value: str) -> None:
    with pytest.raises(SimSettingError, match=f"^{variable}: "):
        load_settings({"BRUPOP_SIM_HOST_DIR": "/tmp/h", variable: value})
