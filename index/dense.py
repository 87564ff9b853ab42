"""Dense retrieval: several normalized vectors per entry in a FAISS inner-product index.

An entry's score is its best vector's cosine similarity (title+summary, symptoms, each question,
each sample's evidence lines), so a short question and a long log both find their nearest view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import faiss
import numpy as np

from index.query_text import evidence_text
from kb.schema import Entry

SEARCH_DEPTH = 256  # vectors retrieved per query; entries beyond are scored 0


@dataclass(frozen=True)
class DenseText:
    entry: int  # index into the KB's entries
    kind: str  # "overview" | "symptoms" | "question" | "sample"
    ordinal: int  # which question/sample of the entry
    text: str


def dense_texts(entries: Sequence[Entry]) -> list[DenseText]:
    out: list[DenseText] = []
    for i, e in enumerate(entries):
        out.append(DenseText(i, "overview", 0, f"{e.title}. {e.summary}"))
        out.append(DenseText(i, "symptoms", 0, " ".join(e.symptoms)))
        out.extend(DenseText(i, "question", k, q) for k, q in enumerate(e.questions))
        out.extend(DenseText(i, "sample", k, evidence_text(s)) for k, s in enumerate(e.samples))
    return out


class DenseIndex:
    def __init__(self, index: faiss.Index, vector_entries: Sequence[int], entry_count: int):
        self.index = index
        self.vector_entries = np.asarray(vector_entries, dtype=np.int64)
        self.entry_count = entry_count

    @classmethod
    def from_vectors(
        cls, vectors: np.ndarray, vector_entries: Sequence[int], entry_count: int
    ) -> DenseIndex:
        index = faiss.IndexFlatIP(vectors.shape[1])
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        return cls(index, vector_entries, entry_count)

    def scores(
        self, query_vector: np.ndarray, *, skip_vectors: frozenset[int] = frozenset()
    ) -> np.ndarray:
        """Best cosine per entry (0 where no vector came within SEARCH_DEPTH). `skip_vectors`
        leaves given vectors out (the lint's leave-one-out check)."""
        depth = min(SEARCH_DEPTH + len(skip_vectors), self.index.ntotal)
        sims, ids = self.index.search(
            np.ascontiguousarray(query_vector.reshape(1, -1), dtype=np.float32), depth
        )
        out = np.zeros(self.entry_count, dtype=np.float32)
        for sim, vid in zip(sims[0], ids[0], strict=False):
            if vid < 0 or int(vid) in skip_vectors:
                continue
            entry = self.vector_entries[vid]
            out[entry] = max(out[entry], sim)
        return out
