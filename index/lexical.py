"""BM25 over the descriptive text of each entry (bm25s)."""

from __future__ import annotations

from collections.abc import Sequence

import bm25s
import numpy as np

from index.tokens import tokenize
from kb.schema import Entry


def regex_words(pattern: str) -> str:
    """The literal words of a fingerprint regex, for indexing."""
    import re

    text = re.sub(
        r"\\[dswSDW][+*?]?|\[[^\]]*\][+*?]?|\{\d+(?:,\d*)?\}|\(\?[:i]|[()|?*+^$]", " ", pattern
    )
    return text.replace("\\", "")


def lexical_document(entry: Entry) -> str:
    """What BM25 sees of an entry. Samples are left out so that the lint's "sample ranks its own
    entry first" check tests generalization, not recall of the sample itself."""
    parts = [
        entry.title,
        entry.title,
        " ".join(entry.tags),
        entry.summary,
        *entry.symptoms,
        *entry.root_cause,
        *entry.affects,
        *(regex_words(f.pattern) for f in entry.fingerprints),
        *entry.questions,
    ]
    return "\n".join(parts)


class LexicalIndex:
    def __init__(self, entries: Sequence[Entry]):
        self.size = len(entries)
        corpus = [tokenize(lexical_document(e)) or ["empty"] for e in entries]
        self._bm25 = bm25s.BM25()
        self._bm25.index(corpus, show_progress=False)
        self._vocab = set().union(*map(set, corpus)) if corpus else set()

    def scores(self, query: str) -> np.ndarray:
        tokens = [t for t in tokenize(query) if t in self._vocab]
        if not tokens:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(tokens), dtype=np.float32)
