"""Compile fingerprint regexes in the linear-time engine (google-re2), the one dialect the KB
allows."""

from __future__ import annotations

from functools import lru_cache

import re2

from kb.errors import PatternError

_OPTIONS = re2.Options()
_OPTIONS.max_mem = 64 << 20  # enough for long alternations; RE2 falls back to NFA, never backtracks
_OPTIONS.log_errors = False


def line_mode(pattern: str) -> str:
    """Fingerprints describe log lines: ^ and $ anchor at line boundaries in every engine."""
    return "(?m)" + pattern


@lru_cache(maxsize=4096)
def compile_linear(pattern: str) -> re2._Regexp:
    try:
        return re2.compile(line_mode(pattern), options=_OPTIONS)
    except re2.error as exc:
        raise PatternError(f"{pattern!r}: {exc}") from None
