"""Per-state transition timeouts, measured from the spec's timestamp."""

from brupop.domain.rollout.transition_timeout import is_timed_out, transition_deadline
from brupop.domain.states import StateTimeouts
from brupop.domain.states import UpdateState as S
from tests.unit.domain.controller_shadows import NOW, ago, shadow

LIMITS = StateTimeouts()


def test_a_node_still_short_of_its_desired_state_times_out_after_that_states_limit() -> None:
    staging = shadow("n", spec=S.STAGED_AND_PERFORMED_UPDATE, state=S.IDLE, stamped=ago(720))
    assert not is_timed_out(staging, NOW, LIMITS)
    late = staging.model_copy(
        update={"spec": staging.spec.model_copy(update={"state_transition_timestamp": ago(721)})}
    )
    assert is_timed_out(late, NOW, LIMITS)


def test_each_state_has_its_own_limit() -> None:
    cases = [
        (S.IDLE, S.MONITORING_UPDATE, 120),
        (S.STAGED_AND_PERFORMED_UPDATE, S.IDLE, 720),
        (S.REBOOTED_INTO_UPDATE, S.STAGED_AND_PERFORMED_UPDATE, 600),
        (S.MONITORING_UPDATE, S.REBOOTED_INTO_UPDATE, 300),
    ]
    for spec, state, limit in cases:
        node = shadow("n", spec=spec, state=state, stamped=ago(0))
        assert transition_deadline(node, LIMITS) == ago(-limit), spec


def test_a_node_that_reached_its_state_has_no_deadline() -> None:
    node = shadow("n", spec=S.REBOOTED_INTO_UPDATE, state=S.REBOOTED_INTO_UPDATE, stamped=ago(9999))
    assert transition_deadline(node, LIMITS) is None


def test_a_crash_the_controller_has_not_answered_is_not_a_timeout() -> None:
    node = shadow("n", spec=S.REBOOTED_INTO_UPDATE, state=S.ERROR_RESET, stamped=ago(9999))
    assert not is_timed_out(node, NOW, LIMITS)


def test_a_crashed_node_sent_back_to_idle_never_times_out_as_its_crash_is_counted() -> None:
    node = shadow("n", spec=S.IDLE, state=S.ERROR_RESET, stamped=ago(10**6), crashes=1)
    assert transition_deadline(node, LIMITS) is None


def test_a_node_sent_back_to_idle_after_a_counted_timeout_never_times_out_again() -> None:
    node = shadow(
        "n",
        spec=S.IDLE,
        state=S.STAGED_AND_PERFORMED_UPDATE,
        stamped=ago(10**6),
        failed_at=ago(10**6),
    )
    assert transition_deadline(node, LIMITS) is None


def test_a_node_finishing_its_update_times_out_in_idle_despite_an_older_failure() -> None:
    node = shadow(
        "n", spec=S.IDLE, state=S.MONITORING_UPDATE, stamped=ago(121), failed_at=ago(5000)
    )
    assert is_timed_out(node, NOW, LIMITS)


def test_no_timestamp_or_no_limit_means_no_timeout() -> None:
    unstamped = shadow("n", spec=S.REBOOTED_INTO_UPDATE, state=S.STAGED_AND_PERFORMED_UPDATE)
    assert transition_deadline(unstamped, LIMITS) is None
    unlimited = StateTimeouts(rebooted_into_update=None)
    stamped = shadow(
        "n", spec=S.REBOOTED_INTO_UPDATE, state=S.STAGED_AND_PERFORMED_UPDATE, stamped=ago(10**6)
    )
    assert not is_timed_out(stamped, NOW, unlimited)


def test_no_status_means_no_timeout() -> None:
    node = shadow("n", spec=S.STAGED_AND_PERFORMED_UPDATE, state=None, stamped=ago(10**6))
    assert not is_timed_out(node, NOW, LIMITS)
