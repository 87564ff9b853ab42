"""The engine: Report -> (triage) -> retrieval -> fusion -> `bot.decide` -> calibrated Diagnosis.

`Engine.diagnose` is the one entry: the CLI, the Slack app, the eval, calibration and the KB lint
all call it. Pure apart from loading the index once; torch is imported only when dense retrieval
runs, which a decisive fingerprint makes unnecessary.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bot.decide import Catalog, Ranked, decide
from bot.model import Diagnosis, Report, Triage
from bot.settings import Settings
from bot.triage import triage as run_triage
from bot.versions import mismatches, versions_of
from index import calibration
from index.calibration import Calibration
from index.embed import Embedder, choose_embedder
from index.fingerprints import EXTRA_MATCH_BONUS, STRONG, EntryEvidence, FingerprintIndex
from index.fusion import Scores, decisive_fingerprint, ranking
from index.lexical import LexicalIndex
from index.query_text import evidence_text
from index.signal import error_signal, only_warnings, with_attached_tracebacks
from kb.load import KnowledgeBase
from kb.schema import Entry

if TYPE_CHECKING:
    from index.dense import DenseIndex
    from index.store import Manifest

log = logging.getLogger(__name__)

COLLATERAL_DISCOUNT = 0.5
VERSION_MISMATCH_FACTOR = 0.6
RETRIEVERS = ("hybrid", "fingerprint", "lexical", "dense")
QUERY_CACHE = 64


class Engine:
    def __init__(
        self,
        kb: KnowledgeBase,
        *,
        embedder: Embedder,
        index_dir: Path,
        calibrations: dict[str, Calibration] | None = None,
        abstain_below: float | None = None,
        progress: Callable[[int, int], None] | None = None,
    ):
        self.kb = kb
        self._entries = kb.entries
        self._by_id = kb.by_id()
        self.embedder = embedder
        self.index_dir = index_dir
        self.calibrations = calibrations if calibrations is not None else calibration.load_all()
        self.abstain_below = (
            abstain_below if abstain_below is not None else self.calibration_for("hybrid").threshold
        )
        self.fingerprints = FingerprintIndex(self._entries, cache_dir=index_dir.parent)
        self.lexical = LexicalIndex(self._entries)
        self._collateral = np.array([e.collateral for e in self._entries], dtype=bool)
        self._benign = np.array([e.kind == "benign" for e in self._entries], dtype=bool)
        self._versioned = [i for i, e in enumerate(self._entries) if e.applies_to]
        self._explains: dict[str, list[int]] = {}
        for i, e in enumerate(self._entries):
            for finding in e.explains:
                self._explains.setdefault(finding, []).append(i)
        self._dense: DenseIndex | None = None
        self._progress = progress
        self._query_vectors: dict[str, np.ndarray] = {}
        self._cache_lock = threading.Lock()

    @classmethod
    def from_settings(
        cls,
        settings: Settings | None = None,
        *,
        kb: KnowledgeBase | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> Engine:
        """The engine the settings describe; `kb` overrides the settings' knowledge base."""
        settings = settings or Settings()
        index_dir = settings.resolved_index_dir()
        return cls(
            kb or settings.load_kb(),
            embedder=choose_embedder(
                settings.embedder, settings.model_path, settings.model_name, index_dir
            ),
            index_dir=index_dir,
            abstain_below=settings.abstain_below,
            calibrations=calibration.load_all(settings.calibration)
            if settings.calibration
            else None,
            progress=progress,
        )

    # -- DiagnosisEngine protocol -------------------------------------------------------------
    def entry(self, entry_id: str) -> Entry | None:
        return self._by_id.get(entry_id)

    def entries(self) -> tuple[Entry, ...]:
        return self._entries

    def diagnose(
        self,
        report: Report,
        *,
        retriever: str = "hybrid",
        leave_out: frozenset[int] = frozenset(),
    ) -> Diagnosis:
        """The whole pipeline (triage, match, decide). `retriever` runs one retriever alone and
        `leave_out` skips dense vectors (a KB sample's own, for calibration and the eval): both
        exist so that calibration and the eval measure this very path."""
        started = time.perf_counter()
        triage = run_triage(report.files) if report.kind == "log" else None
        focus = triage.focus_text if triage is not None and triage.focus_text.strip() else ""
        full_evidence = self.fingerprints.scan_files([f.text for f in report.files])
        text = focus or report.text  # the whole input joined only when triage found no focus
        initiating = triage.initiating if triage is not None else None
        named_initiator = (
            triage is not None and initiating is not None and not triage.no_single_initiator
        )
        initiating_summary = triage.summary if triage is not None and named_initiator else ""
        initiating_kind = initiating.kind if initiating is not None and named_initiator else ""
        harmless_lines = with_attached_tracebacks(
            [f.text for f in report.files], self._benign_lines(full_evidence)
        )
        rank_text = focus or text
        if harmless_lines and not focus:
            # the harmless warnings must not steer the text retrievers towards a failure entry
            rank_text = _blank_lines(text, harmless_lines)
        ranked = self._rank(
            rank_text,
            kind=report.kind,
            evidence=None if focus else full_evidence,
            retriever=retriever,
            skip_vectors=leave_out,
            # triage's inference ("rank 3 waited in a different collective") is evidence too
            context=initiating_summary,
            root_known=named_initiator,
            finding=initiating_kind,
            versions=self._versions(report, triage) if report.kind == "log" else None,
        )
        diagnosis = decide(
            ranked,
            self._catalog(retriever),
            text=text,
            kind=report.kind,
            triage=triage,
            full_evidence=full_evidence,
            harmless_lines=harmless_lines,
            files=report.files,
        )
        return diagnosis.model_copy(update={"elapsed_ms": (time.perf_counter() - started) * 1000})

    def _benign_lines(self, evidence: dict[int, EntryEvidence]) -> frozenset[int]:
        """Lines that benign entries' strong fingerprints explain."""
        return frozenset(
            h.line
            for i, ev in evidence.items()
            if self._benign[i] and ev.strong
            for h in ev.hits
            if h.strength == "strong"
        )

    @staticmethod
    def _versions(report: Report, triage: Triage | None) -> dict[str, str]:
        """What triage already read, else a look at the head and tail of each file."""
        if triage is not None and triage.versions:
            return triage.versions
        found: dict[str, str] = {}
        for f in report.files:
            found = versions_of(f.text) | found
        return found

    # -- retrieval -------------------------------------------------------------------------------
    @property
    def dense(self) -> DenseIndex:
        if self._dense is None:
            from index import store

            reason = store.staleness(self.index_dir, self.kb, self.embedder)
            if reason is not None:
                log.info("building the index in %s (%s)", self.index_dir, reason)
                store.build(self.index_dir, self.kb, self.embedder, progress=self._progress)
            _, self._dense = store.load(self.index_dir)
        return self._dense

    def ensure_index(self) -> None:
        _ = self.dense

    def rebuild_index(self) -> Manifest:
        """Build the index now even if it is current; returns its manifest."""
        from index import store

        manifest = store.build(
            self.index_dir, self.kb, self.embedder, progress=self._progress, force=True
        )
        self._dense = None
        return manifest

    @staticmethod
    def _query_text(text: str, kind: str, evidence: dict[int, EntryEvidence]) -> str:
        if kind == "question":
            return text.strip()[:2000]
        hit_lines = frozenset(h.line for ev in evidence.values() for h in ev.hits)
        return evidence_text(text, hit_lines=hit_lines)

    def _rank(
        self,
        text: str,
        *,
        kind: str,
        evidence: dict[int, EntryEvidence] | None = None,
        retriever: str = "hybrid",
        skip_vectors: frozenset[int] = frozenset(),
        context: str = "",
        root_known: bool = False,
        finding: str = "",
        versions: dict[str, str] | None = None,
    ) -> Ranked:
        """Score every entry. `context` is added to the text retrievers' query; `root_known` says
        triage already named the initiating failure, so collateral entries step back."""
        n = len(self._entries)
        evidence = self.fingerprints.scan(text) if evidence is None else evidence
        fp = np.zeros(n, dtype=np.float32)
        strong = np.zeros(n, dtype=bool)
        for i, ev in evidence.items():
            fp[i] = ev.score
            strong[i] = ev.strong
        if finding and retriever in ("hybrid", "fingerprint"):
            # triage's inference counts as a strong fingerprint for the entries that explain it
            for i in self._explains.get(finding, ()):
                fp[i] = max(fp[i], STRONG) + EXTRA_MATCH_BONUS
                strong[i] = True
        # the root cause outranks what followed
        if root_known or (strong & ~self._collateral & ~self._benign).any():
            fp[self._collateral] *= COLLATERAL_DISCOUNT
        query = self._query_text(text, kind, evidence)
        if context:
            query = f"{context}\n{query}"
        lexical = (
            self.lexical.scores(query)
            if retriever in ("hybrid", "lexical")
            else np.zeros(n, np.float32)
        )
        use_dense = retriever == "dense" or (
            # a harmless warning's fingerprint decides nothing about the failure entries
            retriever == "hybrid"
            and decisive_fingerprint(np.where(self._benign, 0.0, fp), strong & ~self._benign)
            is None
        )
        dense = np.zeros(n, dtype=np.float32)
        if use_dense:
            vector = self._embed_query(query)
            dense = self.dense.scores(vector, skip_vectors=skip_vectors)
        if retriever == "fingerprint":
            scores = Scores(fp, np.zeros(n, np.float32), np.zeros(n, np.float32))
        elif retriever == "lexical":
            scores = Scores(np.zeros(n, np.float32), lexical, np.zeros(n, np.float32))
        elif retriever == "dense":
            scores = Scores(np.zeros(n, np.float32), np.zeros(n, np.float32), dense)
        else:
            scores = Scores(fp, lexical, dense)
        fused = scores.fused()
        if versions:  # an entry whose version range the log rules out steps back
            for i in self._versioned:
                if mismatches(self._entries[i].applies_to, versions):
                    fused[i] *= VERSION_MISMATCH_FACTOR
        signal = max(error_signal(text), error_signal(context)) if context else error_signal(text)
        return Ranked(
            ranking(fused),
            fused,
            scores,
            strong,
            evidence,
            use_dense,
            query,
            retriever,
            signal,
            warnings_only=kind == "log" and not context and only_warnings(text),
        )

    def _embed_query(self, query: str) -> np.ndarray:
        """One embedding per distinct query among the last few (the eval and calibration run the
        hybrid and the dense retriever on the same text; a re-pasted log costs nothing)."""
        with self._cache_lock:
            vector = self._query_vectors.pop(query, None)
        if vector is None:
            vector = self.embedder.embed([query])[0]
        with self._cache_lock:  # the Slack listeners share one engine across threads
            self._query_vectors[query] = vector
            while len(self._query_vectors) > QUERY_CACHE:
                self._query_vectors.pop(next(iter(self._query_vectors)), None)
        return vector

    # -- deciding --------------------------------------------------------------------------------
    def calibration_for(self, retriever: str) -> Calibration:
        """The fitted model of one retriever; the prior where none was fitted."""
        return self.calibrations.get(retriever, calibration.PRIOR)

    def threshold(self, retriever: str = "hybrid") -> float:
        return (
            self.abstain_below
            if retriever == "hybrid"
            else self.calibration_for(retriever).threshold
        )

    def _catalog(self, retriever: str) -> Catalog:
        return Catalog(
            self._entries, self._benign, self.calibration_for(retriever), self.threshold(retriever)
        )


def _blank_lines(text: str, numbers: frozenset[int]) -> str:
    """`text` with the given 1-based lines emptied (line numbers of the rest stay the same)."""
    return "\n".join("" if n in numbers else line for n, line in enumerate(text.split("\n"), 1))
