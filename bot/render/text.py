"""Text helpers every renderer shares (no Slack or terminal specifics)."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\"'])")


def first_sentences(text: str, n: int = 2) -> str:
    """The first `n` sentences, whitespace folded: the why shown before the fix (DESIGN §5b)."""
    return " ".join(_SENTENCE_END.split(" ".join(text.split()))[:n])
