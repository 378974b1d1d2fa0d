"""The exception hierarchy of evalkit.

Every error a user can cause is an ``EvalkitError`` (a ``ValueError``), so callers can catch
one class; the subclasses say which stage refused.
"""

from __future__ import annotations

__all__ = [
    "DegenerateDataWarning",
    "EvalkitError",
    "SessionResolutionError",
    "ValidationError",
    "VersionMismatchError",
]


class EvalkitError(ValueError):
    """Base class of every error evalkit raises on purpose."""


class SessionResolutionError(EvalkitError):
    """No session could be resolved (unknown explicit id, or nothing eligible)."""


class ValidationError(EvalkitError):
    """A record or input broke a rule of the record contract; the message names field and rule."""


class VersionMismatchError(EvalkitError):
    """A stored record was scored under a rubric version or text that evalkit does not have."""


class DegenerateDataWarning(RuntimeWarning):
    """Data on which a statistic is undefined or degenerate; the result follows a documented rule."""
