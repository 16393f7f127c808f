"""Typed domain errors: a rule that cannot be satisfied says so, by name."""

from __future__ import annotations


class DomainError(Exception):
    """Base of every error the domain raises."""


class UnexpectedHostStateError(DomainError):
    """The host is not in the update state the next step requires."""


class VersionMismatchError(DomainError):
    """The host offers (or runs) a version other than the one the controller asked for."""


class BootModeChangedError(DomainError):
    """The host came back from its update in another boot mode (FIPS or not) than before."""
