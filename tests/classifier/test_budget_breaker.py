"""TokenBucket and CircuitBreaker: the small state machines behind the classifier guard (time passed in)."""

from __future__ import annotations

from stickyroute.classifier.guard import BreakerState, CircuitBreaker, TokenBucket

# ---------------------------------------------------------------- TokenBucket


def test_token_bucket_starts_full_and_refills_at_the_rate() -> None:
    bucket = TokenBucket(rate_per_minute=60, capacity=3, now=0.0)  # 1 token per second

    assert [bucket.take(0.0) for _ in range(4)] == [True, True, True, False]
    assert bucket.tokens(0.5) == 0.5
    assert bucket.take(0.5) is False
    assert bucket.take(1.0) is True
    assert bucket.tokens(1.0) == 0.0


def test_token_bucket_never_exceeds_capacity() -> None:
    bucket = TokenBucket(rate_per_minute=60, capacity=2, now=0.0)
    bucket.take(0.0)

    assert bucket.tokens(3600.0) == 2.0


def test_token_bucket_does_not_refill_when_the_clock_goes_back() -> None:
    bucket = TokenBucket(rate_per_minute=60, capacity=1, now=10.0)
    assert bucket.take(10.0) is True

    assert bucket.tokens(5.0) == 0.0
    assert bucket.take(10.5) is False
    assert bucket.take(11.0) is True


def test_zero_capacity_bucket_never_gives_a_token() -> None:
    bucket = TokenBucket(rate_per_minute=0, capacity=0, now=0.0)
    assert bucket.take(1e9) is False


# ---------------------------------------------------------------- CircuitBreaker


def test_breaker_opens_after_n_consecutive_failures_and_half_opens_after_cooldown() -> None:
    breaker = CircuitBreaker(failures=3, cooldown_s=30.0)

    breaker.record_failure(1.0)
    breaker.record_failure(2.0)
    assert breaker.state(2.0) is BreakerState.CLOSED
    breaker.record_failure(3.0)

    assert breaker.state(3.0) is BreakerState.OPEN
    assert breaker.allow(32.9) is False
    assert breaker.state(33.0) is BreakerState.HALF_OPEN
    assert breaker.allow(33.0) is True     # the one trial
    assert breaker.allow(33.0) is False    # others wait for its verdict
    breaker.record_success()
    assert breaker.state(33.0) is BreakerState.CLOSED
    assert breaker.allow(33.0) is True


def test_a_success_resets_the_consecutive_count() -> None:
    breaker = CircuitBreaker(failures=2, cooldown_s=10.0)

    breaker.record_failure(0.0)
    breaker.record_success()
    breaker.record_failure(1.0)

    assert breaker.state(1.0) is BreakerState.CLOSED


def test_a_failed_trial_reopens_for_a_full_cooldown() -> None:
    breaker = CircuitBreaker(failures=1, cooldown_s=10.0)
    breaker.record_failure(0.0)
    assert breaker.allow(10.0) is True

    breaker.record_failure(12.0)

    assert breaker.state(21.9) is BreakerState.OPEN
    assert breaker.state(22.0) is BreakerState.HALF_OPEN


def test_released_trial_can_be_taken_again() -> None:
    breaker = CircuitBreaker(failures=1, cooldown_s=10.0)
    breaker.record_failure(0.0)
    assert breaker.allow(10.0) is True

    breaker.release()

    assert breaker.allow(10.0) is True


def test_breaker_with_zero_failures_never_opens() -> None:
    breaker = CircuitBreaker(failures=0, cooldown_s=10.0)
    for t in range(10):
        breaker.record_failure(float(t))
    assert breaker.state(10.0) is BreakerState.CLOSED


