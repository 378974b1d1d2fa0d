"""Keep API keys out of everything a judge run writes or prints.

A :class:`Redactor` knows the secrets of a run (the API keys its clients hold) and scrubs any
text before it reaches a run-log line, a message on stderr or an exception message:

* every token (a run of letters, digits and ``-_.~+/=``) that shares 8 consecutive characters
  with a secret (the whole secret when it is shorter) becomes ``[REDACTED]``; this catches a
  server that echoes the key back, whole or in part (``Incorrect API key: sk-abc...wxyz``);
* the value of an ``Authorization``, ``x-api-key`` or ``api-key`` header or field, and any
  ``Bearer`` credential, is replaced whatever it is (a key evalkit never saw: a proxy's token).

The placeholder key sent to a local server without one is not a secret and is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["REDACTED", "Redactor"]

REDACTED = "[REDACTED]"
_WINDOW = 8
_TOKEN = re.compile(r"[A-Za-z0-9_.~+/=-]+")
_HEADER_VALUE = re.compile(
    r"""(?ix)
    (["']?(?:authorization|proxy-authorization|x-api-key|api[-_]key)["']?\s*[:=]\s*["']?)
    (?:bearer\s+|basic\s+)?
    [^\s"',}\]]+
    """
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9_.~+/=-]{4,}")


class Redactor:
    """Scrub ``secrets`` (and credential headers) from text; see the module docstring."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._windows: set[str] = set()
        self._short: set[str] = set()
        for secret in secrets:
            if not secret:
                continue
            if len(secret) < _WINDOW:
                self._short.add(secret)
            else:
                self._windows.update(
                    secret[i : i + _WINDOW] for i in range(len(secret) - _WINDOW + 1)
                )

    def _leaks(self, token: str) -> bool:
        if any(short in token for short in self._short):
            return True
        return any(token[i : i + _WINDOW] in self._windows for i in range(len(token) - 7))

    def _token(self, match: re.Match[str]) -> str:
        token = match.group()
        return REDACTED if self._leaks(token) else token

    def __call__(self, text: str) -> str:
        """``text`` with every secret and credential header value replaced by ``[REDACTED]``."""
        if not text:
            return text
        text = _HEADER_VALUE.sub(lambda m: m.group(1) + REDACTED, text)
        text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
        if self._windows or self._short:
            text = _TOKEN.sub(self._token, text)
        return text
