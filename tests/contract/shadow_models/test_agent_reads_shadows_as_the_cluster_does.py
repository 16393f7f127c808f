"""The agent's shadow models (plain dataclasses) and the cluster's (pydantic) read the same JSON
alike: whatever the agent accepts the cluster accepts as the same values, whatever the cluster
refuses the agent refuses, and on the JSON types the CRD declares both accept and refuse alike.
The agent's status is written as the cluster writes it.

The one difference is kept on purpose: pydantic's lax mode also takes a number for a timestamp
and a numeric string, a float or a boolean for the crash count; the agent takes only what the
CRD declares (kube-apiserver refuses the rest before any agent could read it).
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from brupop.domain import shadow as cluster
from brupop.domain.host import agent_shadow as agent
from brupop.domain.host_kind import HostKind
from brupop.domain.states import UpdateState
from brupop.domain.timestamps import format_rfc3339
from brupop.domain.versions import SEMVER_PATTERN
from tests.support.outside_input import outside_json

STATES = [state.value for state in UpdateState]
HOST_KINDS = [kind.value for kind in HostKind]
TIMESTAMP_FIELDS = ("state_transition_timestamp", "state_transition_failure_timestamp")


def _moments() -> st.SearchStrategy[str]:
    """RFC 3339 texts as writers produce them: any offset, any number of fraction digits."""
    offsets = st.integers(-23 * 60, 23 * 60).map(lambda m: timezone(timedelta(minutes=m)))
    moments = st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    )
    written = st.builds(lambda moment, tz: moment.astimezone(tz).isoformat(), moments, offsets)
    return st.one_of(
        written,
        st.builds(format_rfc3339, moments),
        written.map(lambda text: text.replace("+00:00", "Z")),
        st.from_regex(r"\A\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z"),
    )


def _versions() -> st.SearchStrategy[str]:
    """Semantic versions, and near misses: Unicode digits, a trailing newline, leading zeros."""
    return st.one_of(
        st.from_regex(SEMVER_PATTERN, fullmatch=True),
        st.sampled_from(["1.2.3\n", "01.2.3", "1.2", "v1.2.3", " 1.2.3", "\u0661.2.3", ""]),
    )


def _wrong_types() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(), st.lists(st.integers(), max_size=2)
    )


def _value(kind: str) -> st.SearchStrategy[Any]:
    """A field's value: mostly of the CRD's type, sometimes anything JSON can hold."""
    typed = {
        "version": _versions(),
        "state": st.one_of(st.sampled_from(STATES), st.sampled_from(["idle", "Idle ", "Done"])),
        "timestamp": st.one_of(_moments(), st.none(), st.text(max_size=30)),
        "count": st.one_of(st.integers(-5, 5), st.integers(2**32 - 3, 2**32 + 3), st.integers()),
        "host_kind": st.sampled_from([*HOST_KINDS, "Updatable", "locked-down", ""]),
        "mode": st.sampled_from(["fips", "standard", "FIPS", "fips ", ""]),
        "staged": st.sampled_from(["Staged", "Ready", "staged", ""]),
        "text": st.text(max_size=130),
    }[kind]
    return st.one_of(typed, typed, typed, _wrong_types(), outside_json(5, deep=False))


SPEC_FIELDS = {"state": "state", "state_transition_timestamp": "timestamp", "version": "version"}
STATUS_FIELDS = {
    "current_version": "version",
    "target_version": "version",
    "current_state": "state",
    "crash_count": "count",
    "state_transition_failure_timestamp": "timestamp",
    "host_kind": "host_kind",
    "host_note": "text",
    "variant": "text",
    "staged_version": "version",
    "staged_state": "staged",
    "boot_mode": "mode",
    "boot_mode_changed_from": "mode",
}


def _documents(fields: dict[str, str]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects with any of `fields` (some left out), and keys neither model knows."""
    chosen = st.fixed_dictionaries(
        {}, optional={name: _value(kind) for name, kind in fields.items()}
    )
    extra = st.dictionaries(st.text(max_size=8), outside_json(3, deep=False), max_size=2)
    return st.builds(lambda known, unknown: {**unknown, **known}, chosen, extra)


def _read(read: Any, document: Any) -> Any:
    """The model, or None when refused; a refusal must be a ValueError (the typed error)."""
    try:
        return read(document)
    except ValueError:
        return None


def _values(model: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(model, name) for name in names}


def _declared_types(document: dict[str, Any]) -> bool:
    """The document's known fields hold the JSON types the CRD declares (null where allowed)."""
    for name, value in document.items():
        if name == "crash_count" and (isinstance(value, bool) or not isinstance(value, int)):
            return False
        if name in TIMESTAMP_FIELDS and value is not None and not isinstance(value, str):
            return False
    return True


def _agree(agent_read: Any, cluster_read: Any, document: Any) -> tuple[Any, Any]:
    mine, theirs = _read(agent_read, document), _read(cluster_read, document)
    names = tuple(field.name for field in dataclasses.fields(agent_read.__self__))
    if mine is not None:
        assert theirs is not None, "the agent accepted what the cluster refuses"
        assert _values(mine, names) == _values(theirs, names)
    if isinstance(document, dict) and _declared_types(document):
        assert (mine is None) == (theirs is None), "they disagree on a document of CRD types"
    return mine, theirs


@settings(max_examples=600, deadline=None)
@given(_documents(SPEC_FIELDS))
@example({"state": "Idle", "state_transition_timestamp": "2026-01-05T10:00:00.123456789Z"})
@example({"version": "1.2.3\n"})
@example({"state": None})
def test_a_spec_is_read_alike(document: dict[str, Any]) -> None:
    _agree(agent.AgentShadowSpec.from_json, cluster.ShadowSpec.model_validate, document)


@settings(max_examples=1000, deadline=None)
@given(_documents(STATUS_FIELDS))
@example({"current_version": "1.0.0", "target_version": "1.1.0", "current_state": "ErrorReset"})
@example(
    {"current_version": "1.0.0", "target_version": "1.0.0", "current_state": "Idle"}
    | {"crash_count": 2**32 - 1, "state_transition_failure_timestamp": "2026-01-05T10:00:00+02:00"}
)
@example({"current_version": "1.0.0", "target_version": "1.0.0", "current_state": "Idle"})
def test_a_status_is_read_alike_and_written_alike(document: dict[str, Any]) -> None:
    mine, theirs = _agree(
        agent.AgentShadowStatus.from_json, cluster.ShadowStatus.model_validate, document
    )
    if mine is not None:
        assert mine.to_json() == theirs.model_dump(mode="json")
        assert agent.AgentShadowStatus.from_json(mine.to_json()) == mine


@given(outside_json(10, deep=False))
def test_anything_in_place_of_a_spec_or_a_status_is_read_alike(value: Any) -> None:
    _agree(agent.AgentShadowSpec.from_json, cluster.ShadowSpec.model_validate, value)
    _agree(agent.AgentShadowStatus.from_json, cluster.ShadowStatus.model_validate, value)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("crash_count", "3"),
        ("crash_count", 3.0),
        ("crash_count", True),
        ("state_transition_failure_timestamp", 1_700_000_000),
    ],
)
def test_only_pydantics_lax_readings_of_other_json_types_are_refused_by_the_agent(
    field: str, value: object
) -> None:
    document: dict[str, object] = {"current_version": "1.0.0", "target_version": "1.0.0"}
    document |= {"current_state": "Idle", field: value}

    assert _read(cluster.ShadowStatus.model_validate, document) is not None
    assert _read(agent.AgentShadowStatus.from_json, document) is None


def test_the_agent_counts_crashes_up_to_the_clusters_limit() -> None:
    limit = agent.AgentShadowStatus("1.0.0", "1.0.0", UpdateState.IDLE, crash_count=2**32 - 1)
    assert limit.crash_count == cluster.CRASH_COUNT_MAX
    with pytest.raises(ValueError, match="crash_count"):
        agent.AgentShadowStatus("1.0.0", "1.0.0", UpdateState.IDLE, crash_count=2**32)
