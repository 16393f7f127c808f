"""kube-apiserver's rule for tokens bound to an object being deleted: they hold until 60 s past
its deletionTimestamp, and not a moment longer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from brupop.domain.cluster.token_binding import deletion_invalidates

DELETED = datetime(2026, 1, 5, 10, 0, 0, tzinfo=UTC)


def test_an_object_not_being_deleted_never_invalidates_its_tokens() -> None:
    assert not deletion_invalidates(None, DELETED + timedelta(days=365))


def test_tokens_hold_up_to_sixty_seconds_past_the_deletion_timestamp() -> None:
    assert not deletion_invalidates(DELETED, DELETED - timedelta(seconds=30))
    assert not deletion_invalidates(DELETED, DELETED + timedelta(seconds=60))


def test_tokens_are_invalid_once_sixty_seconds_past_the_deletion_timestamp_have_gone() -> None:
    assert deletion_invalidates(DELETED, DELETED + timedelta(seconds=60, milliseconds=1))
