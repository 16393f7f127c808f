"""Which time zone names brupop takes: exactly those `ZoneInfo` can load. A folder of tzdata
(`US`, `Europe`), a path, a NUL byte or an over-long name is refused with a reason, never
raised as whatever `ZoneInfo` happened to raise."""

from __future__ import annotations

from datetime import UTC

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from brupop.domain.windows.zoned_window import ZONE_NAME_MAX_LENGTH, WindowError, zone_named
from tests.support.outside_input import outside_text

TZDATA_FOLDERS = ("US", "America", "Europe", "Etc", "Asia", "America/Argentina")
_IN_A_FOLDER = st.builds(
    lambda folder, rest: f"{folder}/{rest}", st.sampled_from(TZDATA_FOLDERS), outside_text(16)
)


@pytest.mark.parametrize("name", TZDATA_FOLDERS)
def test_a_folder_of_tzdata_is_refused_as_a_zone_naming_it(name: str) -> None:
    with pytest.raises(WindowError) as refused:
        zone_named(name)
    assert repr(name) in str(refused.value)
    assert "a group of time zones" in str(refused.value)


@pytest.mark.parametrize(
    "name",
    [
        "../x",
        "/etc/localtime",
        "Europe/Paris/",
        "Europe//Paris",
        "a\x00b",
        "zone.tab",
        "tzdata.zi",
        "America/__pycache__",
        "Mars/Olympus",
        "utc",
        " ",
        "x" * (ZONE_NAME_MAX_LENGTH + 1),
        "\udc80",
    ],
)
def test_a_name_zoneinfo_cannot_load_is_refused_with_a_reason(name: str) -> None:
    with pytest.raises(WindowError, match="time zone"):
        zone_named(name)


@pytest.mark.parametrize("name", ["UTC", "Europe/Paris", "America/Argentina/Buenos_Aires"])
def test_a_zone_zoneinfo_loads_is_taken(name: str) -> None:
    zone = zone_named(name)
    assert zone is UTC or str(zone) == name


@settings(max_examples=200, deadline=500)
@given(st.one_of(outside_text(), _IN_A_FOLDER))
@example("US")
def test_the_zone_check_refuses_any_string_with_its_typed_error(name: str) -> None:
    try:
        zone_named(name)
    except WindowError as error:
        assert str(error)
