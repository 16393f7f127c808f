"""TokenReview caching over HTTPS: an agent's steady traffic costs one review per cache period."""

from __future__ import annotations

from brupop.domain.shadow import ShadowStatus
from brupop.domain.states import UpdateState
from tests.integration.apiserver.conftest import RigFactory


def test_many_requests_from_one_agent_within_the_cache_time_cost_one_review(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(token_review_cache_seconds=300)
    agent = rig.client("n1")
    status = ShadowStatus(
        current_version="1.0.0", target_version="1.0.0", current_state=UpdateState.IDLE
    )
    before = rig.cluster.token_reviewer.review_count

    agent.create()
    for _ in range(25):
        agent.update_status(status)
        agent.get()

    # The node-uid lookup and every later call share the token's one review.
    assert rig.cluster.token_reviewer.review_count - before == 1


def test_without_a_cache_every_request_costs_a_review(make_rig: RigFactory) -> None:
    rig = make_rig(token_review_cache_seconds=0)
    agent = rig.client("n1")
    before = rig.cluster.token_reviewer.review_count

    for _ in range(5):
        agent.get()

    assert rig.cluster.token_reviewer.review_count - before == 6  # node-uid lookup + 5 reads
