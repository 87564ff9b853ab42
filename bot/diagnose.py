"""The pipeline: Report -> (triage) -> retrieval -> fusion -> calibrated Diagnosis.

Pure apart from loading the index once; the CLI, the Slack app and the eval all call `Engine`.
torch is imported only when dense retrieval runs, which a decisive fingerprint makes unnecessary.
"""

from __future__ import annotations

import logging
import threading
import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import re2

from bot.model import Candidate, Diagnosis, FingerprintHit, LogFile, Report, Triage, Why
from bot.redact import redact
from bot.settings import Settings
from bot.triage import triage
from bot.usercode import user_frame
from bot.versions import mismatches, versions_of
from index import calibrate
from index.calibrate import Calibration
from index.embed import Embedder, choose_embedder
from index.evidence import clip_around, evidence_text
from index.fingerprints import EXTRA_MATCH_BONUS, STRONG, EntryEvidence, FingerprintIndex, Hit
from index.fuse import Scores, candidate_features, decisive_fingerprint, error_signal, ranking
from index.lexical import LexicalIndex
from kb.load import KnowledgeBase
from kb.patterns import compile_linear
from kb.schema import Entry

log = logging.getLogger(__name__)

TOP_K = 5
COLLATERAL_DISCOUNT = 0.5
VERSION_MISMATCH_FACTOR = 0.6
HIT_TEXT_CHARS = 300
RETRIEVERS = ("hybrid", "fingerprint", "lexical", "dense")
QUERY_CACHE = 64


@dataclass(frozen=True)
class Ranked:
    """One retrieval run before rendering: scores of every entry and what produced them."""

    order: np.ndarray
    fused: np.ndarray
    scores: Scores
    strong: np.ndarray
    evidence: dict[int, EntryEvidence]
    dense_used: bool
    query: str
    retriever: str = "hybrid"
    signal: float = 1.0  # index.fuse.error_signal of the ranked text


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
        self.calibrations = calibrations if calibrations is not None else calibrate.load_all()
        self.abstain_below = abstain_below if abstain_below is not None else self.calibration_for("hybrid").threshold
        self.fingerprints = FingerprintIndex(self._entries, cache_dir=index_dir.parent)
        self.lexical = LexicalIndex(self._entries)
        self._collateral = np.array([e.collateral for e in self._entries], dtype=bool)
        self._benign = np.array([e.kind == "benign" for e in self._entries], dtype=bool)
        self._versioned = [i for i, e in enumerate(self._entries) if e.applies_to]
        self._explains: dict[str, list[int]] = {}
        for i, e in enumerate(self._entries):
            for finding in e.explains:
                self._explains.setdefault(finding, []).append(i)
        self._dense = None
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
            embedder=choose_embedder(settings.embedder, settings.model_path, settings.model_name, index_dir),
            index_dir=index_dir,
            abstain_below=settings.abstain_below,
            calibrations=calibrate.load_all(settings.calibration) if settings.calibration else None,
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
        triage = run_triage(report) if report.kind == "log" else None
        focus = triage.focus_text if triage is not None and triage.focus_text.strip() else ""
        full_evidence = self.fingerprints.scan_files([f.text for f in report.files])
        text = focus or report.text  # the whole input joined only when triage found no focus
        named_initiator = triage is not None and triage.initiating is not None and not triage.no_single_initiator
        harmless_lines = self._benign_lines(full_evidence)
        rank_text = focus or text
        if harmless_lines and not focus:
            # the harmless warnings must not steer the text retrievers towards a failure entry
            rank_text = _blank_lines(text, harmless_lines)
        ranked = self.rank(
            rank_text,
            kind=report.kind,
            evidence=None if focus else full_evidence,
            retriever=retriever,
            skip_vectors=leave_out,
            # triage's inference ("rank 3 waited in a different collective") is evidence too
            context=triage.summary if named_initiator else "",
            root_known=named_initiator,
            finding=triage.initiating.kind if named_initiator else "",
            versions=self._versions(report, triage) if report.kind == "log" else None,
        )
        return self.decide(
            ranked,
            text=text,
            kind=report.kind,
            triage=triage,
            full_evidence=full_evidence,
            started=started,
            harmless_lines=harmless_lines,
            files=report.files,
        )

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
    def dense(self):
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

    def rebuild_index(self):
        """Build the index now even if it is current; returns its manifest."""
        from index import store

        manifest = store.build(self.index_dir, self.kb, self.embedder, progress=self._progress, force=True)
        self._dense = None
        return manifest

    def query_text(self, text: str, kind: str, evidence: dict[int, EntryEvidence]) -> str:
        if kind == "question":
            return text.strip()[:2000]
        hit_lines = frozenset(h.line for ev in evidence.values() for h in ev.hits)
        return evidence_text(text, hit_lines=hit_lines)

    def rank(
        self,
        text: str,
        *,
        kind: str,
        evidence: dict[int, EntryEvidence] | None = None,
        retriever: str = "hybrid",
        skip_vectors: frozenset[int] = frozenset(),
        force_dense: bool = False,
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
        if root_known or (strong & ~self._collateral & ~self._benign).any():  # the root cause outranks what followed
            fp[self._collateral] *= COLLATERAL_DISCOUNT
        query = self.query_text(text, kind, evidence)
        if context:
            query = f"{context}\n{query}"
        lexical = self.lexical.scores(query) if retriever in ("hybrid", "lexical") else np.zeros(n, np.float32)
        use_dense = retriever == "dense" or (
            # a harmless warning's fingerprint decides nothing about the failure entries
            retriever == "hybrid"
            and (force_dense or decisive_fingerprint(np.where(self._benign, 0.0, fp), strong & ~self._benign) is None)
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
        return Ranked(ranking(fused), fused, scores, strong, evidence, use_dense, query, retriever, signal)

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
    def confidence_of(self, ranked: Ranked, entry: int, kind: str) -> float:
        return self.calibration_for(ranked.retriever).confidence(self.features_of(ranked, entry, kind))

    @staticmethod
    def features_of(ranked: Ranked, entry: int, kind: str):
        return candidate_features(
            ranked.scores, ranked.strong, ranked.fused, entry,
            dense_used=ranked.dense_used, question=kind == "question", signal=ranked.signal,
        )

    def calibration_for(self, retriever: str) -> Calibration:
        """The fitted model of one retriever; the prior where none was fitted."""
        return self.calibrations.get(retriever, calibrate.PRIOR)

    def threshold(self, retriever: str = "hybrid") -> float:
        return self.abstain_below if retriever == "hybrid" else self.calibration_for(retriever).threshold

    def decide(
        self,
        ranked: Ranked,
        *,
        text: str,
        kind: str,
        triage: Triage | None = None,
        full_evidence: dict[int, EntryEvidence] | None = None,
        started: float | None = None,
        harmless_lines: frozenset[int] = frozenset(),
        files: Sequence[LogFile] = (),
    ) -> Diagnosis:
        """Failure entries compete for the answer; benign entries only say a line is harmless.
        Precedence: a failure with strong evidence > harmless warnings explaining the notable lines
        > a plain bug in the user's code > the calibrated threshold (match or abstain)."""
        lines = _Evidence(_LineLookup(text, files), _focus_lookup(triage))
        shown_evidence = full_evidence if full_evidence is not None else ranked.evidence
        failures = _masked(ranked, self._benign)
        results = self._candidates(failures, lines, shown_evidence, kind)
        top = int(failures.order[0]) if len(failures.order) else -1
        failure_strong = top >= 0 and bool(failures.strong[top]) and failures.fused[top] > 0
        benign = self._benign_candidates(ranked, lines, shown_evidence, kind, failure_strong)
        confidence = results[0].confidence if results else 0.0
        threshold = self.threshold(ranked.retriever)
        verdict, reason, frame = "abstain", "", None
        if benign and not failure_strong and not _unexplained(text, harmless_lines, kind):
            verdict = "benign"
        elif not failure_strong and kind == "log" and (frame := user_frame(text)) is not None:
            verdict = "user-code"
        elif results and confidence >= threshold:
            verdict = "match"
        else:
            reason = "no entry matched" if not results else f"best confidence {confidence:.2f} is below {threshold:.2f}"
        elapsed = (time.perf_counter() - started) * 1000 if started is not None else 0.0
        if verdict == "benign":
            return Diagnosis(
                verdict="benign", confidence=benign[0].confidence, results=tuple(benign), kind=kind,
                triage=triage, elapsed_ms=elapsed,
            )
        return Diagnosis(
            verdict=verdict,
            confidence=confidence,
            results=tuple(results),
            kind=kind,
            triage=triage,
            elapsed_ms=elapsed,
            abstain_reason=reason,
            user_frame=frame,
            harmless=tuple(c for c in benign if c.why.fingerprints),
        )

    def _candidate(self, ranked: Ranked, index: int, lines: _Evidence, shown_evidence: dict[int, EntryEvidence], kind: str) -> Candidate:
        entry = self._entries[index]
        ev = ranked.evidence.get(index)
        shown = shown_evidence.get(index)
        where = lines.input
        if shown is None and ev is not None:  # found only in triage's focus lines
            shown, where = ev, lines.focus or lines.input
        hits = tuple(where.hit(h) for h in (shown.hits if shown and not shown.gated_out else ()))
        features = self.features_of(ranked, index, kind)
        return Candidate(
            id=entry.id,
            title=entry.title,
            score=float(ranked.fused[index]),
            confidence=self.calibration_for(ranked.retriever).confidence(features),
            why=Why(
                fingerprints=hits,
                lexical=float(ranked.scores.lexical_normalized[index]),
                dense=float(ranked.scores.dense[index]),
            ),
            entry=entry,
            features=tuple(features.vector()),
        )

    def _candidates(self, ranked: Ranked, lines: _Evidence, shown_evidence: dict[int, EntryEvidence], kind: str) -> list[Candidate]:
        results: list[Candidate] = []
        for index in ranked.order[:TOP_K]:
            index = int(index)
            if ranked.fused[index] <= 0:
                break
            results.append(self._candidate(ranked, index, lines, shown_evidence, kind))
        return results

    def _benign_candidates(
        self, ranked: Ranked, lines: _Evidence, shown_evidence: dict[int, EntryEvidence], kind: str, failure_strong: bool
    ) -> list[Candidate]:
        """Benign entries this input shows: those whose strong fingerprint hit a line, best first;
        for a question without such a line, the benign entry that tops the whole ranking."""
        hit = [i for i, ev in shown_evidence.items() if self._benign[i] and ev.strong]
        if not hit and kind == "question" and not failure_strong and len(ranked.order):
            first = int(ranked.order[0])
            if self._benign[first] and ranked.fused[first] > 0:
                hit = [first]
        hit.sort(key=lambda i: (-shown_evidence[i].score if i in shown_evidence else 0.0, -float(ranked.fused[i])))
        return [self._candidate(ranked, i, lines, shown_evidence, kind) for i in hit[:TOP_K]]


def _masked(ranked: Ranked, mask: np.ndarray) -> Ranked:
    """The same ranking with the masked entries (benign ones) out of the competition: they score
    zero, so margins and confidences are measured among failure entries only."""
    if not mask.any():
        return ranked
    fused = np.where(mask, 0.0, ranked.fused).astype(ranked.fused.dtype)
    return Ranked(
        ranking(fused), fused, ranked.scores, ranked.strong & ~mask, ranked.evidence, ranked.dense_used, ranked.query, ranked.retriever, ranked.signal
    )


# A Python exception line (possibly behind a launcher prefix): "RuntimeError: ...", "KeyError: 'x'".
_EXCEPTION_LINE = re2.compile(r"(?m)^(?:\[\w+\]:\s*|\d{1,5}: )?\s*(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b(?::|$)")


def _unexplained(text: str, harmless_lines: frozenset[int], kind: str) -> bool:
    """Does the input hold an error the harmless lines do not explain (an exception line)?"""
    if kind != "log":
        return False
    position = counted = 0
    line = 1
    while (match := _EXCEPTION_LINE.search(text, position)) is not None:
        line += text.count("\n", counted, match.start())  # incremental: one pass over a long log
        counted = match.start()
        if line not in harmless_lines:
            return True
        position = match.end() + 1
    return False


def _blank_lines(text: str, numbers: frozenset[int]) -> str:
    """`text` with the given 1-based lines emptied (line numbers of the rest stay the same)."""
    return "\n".join("" if n in numbers else line for n, line in enumerate(text.split("\n"), 1))


def run_triage(report: Report) -> Triage | None:
    return triage(report.files)


@dataclass(frozen=True)
class _Evidence:
    """Where evidence lines are looked up: the user's input, and triage's focus text (whose
    lines say which file and line they were taken from)."""

    input: _LineLookup
    focus: _LineLookup | None


def _focus_lookup(triage: Triage | None) -> _LineLookup | None:
    """Lines of triage's focus text, located where each was taken from."""
    if triage is None or not triage.focus_text.strip():
        return None
    return _LineLookup(triage.focus_text, origins=triage.focus_origins)


class _LineLookup:
    """Fetch a few 1-based lines of the input (the files joined by newlines, as line numbers count
    them) without joining or splitting it, and say where each is in the user's own files."""

    def __init__(self, text: str, files: Sequence[LogFile] = (), origins: Sequence[tuple[str, int]] = ()):
        self._texts = [f.text for f in files] or [text]
        self._names: list[str | None] = [f.name for f in files] or [None]
        self._origins = origins
        self._cache: dict[int, str] = {}
        self._starts: dict[int, tuple[bytes, np.ndarray]] = {}  # per text, made when a line of it is asked for
        self._first_lines: list[int] = []  # the joined numbering's line of each text's line 1
        first = 1
        for t in self._texts:
            self._first_lines.append(first)
            first += t.count("\n") + 1 if len(self._texts) > 1 else 0

    def _where(self, line: int) -> tuple[int, int]:
        index = max(0, bisect_right(self._first_lines, line) - 1)
        return index, line - self._first_lines[index] + 1

    def locate(self, line: int) -> tuple[str | None, int]:
        """(file name, line in that file) of a 1-based line of the joined text."""
        if self._origins:
            return self._origins[line - 1] if 0 < line <= len(self._origins) else (None, line)
        index, local = self._where(line)
        return self._names[index], local

    def hit(self, h: Hit) -> FingerprintHit:
        """A fingerprint hit as the user reads it: file, line in that file, and the redacted line
        clipped around the match."""
        name, line = self.locate(h.line)
        text = redact(self.get(h.line))
        if (m := compile_linear(h.pattern).search(text)) is not None:
            text = clip_around(text, m.start(), m.end(), HIT_TEXT_CHARS)
            m = compile_linear(h.pattern).search(text)  # where it lies in the clipped text, if still whole
        else:
            text = text[:HIT_TEXT_CHARS]
        span = (m.start(), m.end()) if m is not None else None
        return FingerprintHit(pattern=h.pattern, line=line, text=text, strength=h.strength, file=name, span=span)

    def get(self, line: int) -> str:
        if line not in self._cache:
            index, local = self._where(line)
            data, ends = self._newlines(index)
            if 1 <= local <= len(ends) + 1:
                start = int(ends[local - 2]) + 1 if local > 1 else 0
                end = int(ends[local - 1]) if local <= len(ends) else len(data)
                self._cache[line] = data[start:end].decode("utf-8", "replace").strip()
            else:
                self._cache[line] = ""
        return self._cache[line]

    def _newlines(self, index: int) -> tuple[bytes, np.ndarray]:
        """A text's bytes and the offsets of its newlines (numpy: a 10 MB file in milliseconds)."""
        if index not in self._starts:
            data = self._texts[index].encode("utf-8", "replace")
            self._starts[index] = (data, np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10))
        return self._starts[index]
