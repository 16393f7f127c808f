"""The boot mode read from a FIPS report in any shape, and when it counts as changed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brupop.domain.boot_mode import BootMode, changed_from, describe_change, read_fips_report

FIPS, STANDARD = BootMode.FIPS, BootMode.STANDARD
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=14), inner),
    max_leaves=12,
)


def _report(check: Any) -> dict[str, Any]:
    return {"status": "PASS", "results": {"fips01000000": check}}


@pytest.mark.parametrize(
    ("document", "mode"),
    [
        (_report({"status": "PASS"}), FIPS),
        (_report({"status": "FAIL"}), STANDARD),
        (_report({"status": "SKIP"}), None),
        (_report("PASS"), None),
        ({"status": "PASS", "results": {}}, None),
        ({"results": ["fips01000000"]}, None),
        ("PASS", None),
        (None, None),
    ],
)
def test_the_mode_is_the_fips_enabled_checks_verdict_and_nothing_else(
    document: Any, mode: BootMode | None
) -> None:
    assert read_fips_report(document) is mode


@given(document=_JSON | _JSON.map(_report) | _JSON.map(lambda j: {"results": j}))
def test_a_report_in_any_shape_gives_a_mode_or_none_and_never_raises(document: Any) -> None:
    json.dumps(document)
    assert read_fips_report(document) in (FIPS, STANDARD, None)


@pytest.mark.parametrize(
    ("now", "before", "recorded", "former"),
    [
        (FIPS, FIPS, None, None),
        (STANDARD, FIPS, None, FIPS),
        (None, FIPS, None, FIPS),  # a mode no longer shown after one was: fails closed
        (STANDARD, None, None, None),  # never shown before (an older release): nothing kept
        (STANDARD, STANDARD, FIPS, FIPS),  # a change reported stays
        (FIPS, STANDARD, FIPS, None),  # until the host boots in that mode again
    ],
)
def test_a_change_is_the_former_mode_while_the_host_runs_another(
    now: BootMode | None,
    before: BootMode | None,
    recorded: BootMode | None,
    former: BootMode | None,
) -> None:
    assert changed_from(now, before, recorded) is former


def test_the_change_is_told_in_one_sentence_naming_both_modes() -> None:
    assert describe_change(STANDARD, FIPS) == (
        "the host booted in standard mode after its update; it ran in fips mode before"
    )
