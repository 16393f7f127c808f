"""TokenBucket: a burst of takes at once, then one per period; time never runs back."""

from brupop.domain.token_bucket import TokenBucket


def test_a_full_bucket_allows_its_burst_then_one_take_per_period() -> None:
    bucket: TokenBucket | None = TokenBucket.full(2.0, 3, at=100.0)
    for _ in range(3):
        assert bucket is not None
        bucket = bucket.take(100.0)
    assert bucket is not None and bucket.take(100.0) is None
    assert bucket.wait(100.0) == 2.0
    assert bucket.take(101.0) is None
    assert bucket.take(102.0) is not None


def test_refilling_stops_at_the_burst_and_an_earlier_moment_adds_nothing() -> None:
    bucket = TokenBucket.full(1.0, 2, at=10.0)
    assert bucket.refilled(1_000.0).tokens == 2.0
    emptied = TokenBucket(1.0, 2, 0.0, 10.0)
    assert emptied.refilled(5.0).tokens == 0.0


def test_a_period_of_zero_never_runs_out() -> None:
    bucket = TokenBucket.full(0.0, 1, at=0.0)
    for _ in range(5):
        taken = bucket.take(0.0)
        assert taken is not None
        bucket = taken
