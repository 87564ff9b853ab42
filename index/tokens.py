"""Tokenization shared by the BM25 index and its queries: identifiers kept whole and split."""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|\d+")
_SPLIT = re.compile(r"[_.]|(?<=[a-z])(?=[A-Z])")

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "my",
        "of",
        "on",
        "or",
        "our",
        "so",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "why",
        "with",
        "you",
        "your",
        "does",
        "do",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "not",
        "no",
        "yes",
        "get",
        "got",
        "after",
        "before",
        "during",
        "run",
        "running",
        "use",
        "using",
    ]
)


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens; `ibv_modify_qp` gives ibv_modify_qp, ibv, modify, qp; long numbers
    (pids, addresses, sizes) are dropped, short codes (Xid 79, error 110) kept."""
    out: list[str] = []
    for word in _WORD.findall(text):
        if word.isdigit():
            if len(word) <= 3:
                out.append(word)
            continue
        lower = word.lower()
        if lower in STOPWORDS or len(lower) < 2:
            continue
        out.append(lower)
        parts = [p.lower() for p in _SPLIT.split(word) if p]
        if len(parts) > 1:
            out.extend(p for p in parts if len(p) > 1 and p not in STOPWORDS and not p.isdigit())
    return out
