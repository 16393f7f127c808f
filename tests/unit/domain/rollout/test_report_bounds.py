"""Report bounds: a failure no later than now (plus the clock skew), no earlier than its Node."""

from datetime import UTC, datetime, timedelta

from brupop.domain.rollout.report_bounds import CLOCK_SKEW, shadow_problem, status_problem
from brupop.domain.states import UpdateState as S
from tests.unit.domain.controller_shadows import NOW, ago, shadow

END_OF_CALENDAR = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def _status_failed_at(moment: datetime):  # type: ignore[no-untyped-def]
    status = shadow("n", crashes=1, failed_at=moment).status
    assert status is not None
    return status


def test_a_failure_stamped_at_the_end_of_the_calendar_is_refused_naming_the_field() -> None:
    problem = status_problem(_status_failed_at(END_OF_CALENDAR), NOW)
    assert problem is not None
    field, why = problem
    assert field == "state_transition_failure_timestamp"
    assert "9999-12-31T23:59:59+00:00 is later than now" in why


def test_a_failure_within_the_clock_skew_ahead_of_now_is_believed() -> None:
    assert status_problem(_status_failed_at(NOW + CLOCK_SKEW), NOW) is None
    assert status_problem(_status_failed_at(NOW + CLOCK_SKEW + timedelta(seconds=1)), NOW)


def test_a_failure_before_the_node_was_created_is_refused_and_after_it_believed() -> None:
    created = ago(3600)
    before = _status_failed_at(created - CLOCK_SKEW - timedelta(seconds=1))
    problem = status_problem(before, NOW, node_created_at=created)
    assert problem is not None and "before the Node was created" in problem[1]
    assert status_problem(_status_failed_at(ago(60)), NOW, node_created_at=created) is None


def test_a_shadow_is_judged_unless_its_spec_or_status_carries_a_future_instant() -> None:
    assert shadow_problem(shadow("n", crashes=1, failed_at=ago(60)), NOW) is None
    assert shadow_problem(shadow("n", state=None), NOW) is None
    future_spec = shadow("n", spec=S.STAGED_AND_PERFORMED_UPDATE, stamped=END_OF_CALENDAR)
    assert "spec.state_transition_timestamp" in (shadow_problem(future_spec, NOW) or "")
    future_failure = shadow("n", crashes=1, failed_at=END_OF_CALENDAR)
    assert "status.state_transition_failure_timestamp" in (
        shadow_problem(future_failure, NOW) or ""
    )
