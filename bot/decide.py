"""Deciding: from one retrieval run (`Ranked`) to a Diagnosis. Pure: no index, no model, no I/O.

Failure entries compete for the answer; benign entries only say a line is harmless. Precedence: a
failure with strong evidence > harmless warnings explaining the notable lines > a plain bug in the
user's code > the calibrated threshold (match or abstain).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import re2

from bot.model import Candidate, Diagnosis, FingerprintHit, LogFile, Triage, UserFrame, Why
from bot.redact import redact
from bot.usercode import usage_error, user_frame
from index.calibration import Calibration
from index.fingerprints import EntryEvidence, Hit
from index.fusion import Features, Scores, candidate_features, ranking
from index.query_text import clip_around
from kb.patterns import compile_linear
from kb.schema import Entry

TOP_K = 5
WARNINGS_ONLY = "the log shows warnings but no error, and no entry knows them as a failure"
NO_TROUBLE = "nothing in the log says that something went wrong"
HIT_TEXT_CHARS = 300


@dataclass(frozen=True)
class Ranked:
    """One retrieval run before deciding: scores of every entry and what produced them."""

    order: np.ndarray
    fused: np.ndarray
    scores: Scores
    strong: np.ndarray
    evidence: dict[int, EntryEvidence]
    dense_used: bool
    query: str
    retriever: str = "hybrid"
    signal: float = 1.0  # index.signal.error_signal of the ranked text
    warnings_only: bool = False  # a log whose every troubled line is a warning (index.signal)


@dataclass(frozen=True)
class Catalog:
    """What deciding needs to know of the knowledge base and the fitted confidence model."""

    entries: tuple[Entry, ...]
    benign: np.ndarray  # bool per entry
    calibration: Calibration
    threshold: float


def decide(
    ranked: Ranked,
    catalog: Catalog,
    *,
    text: str,
    kind: Literal["log", "question"],
    triage: Triage | None = None,
    full_evidence: dict[int, EntryEvidence] | None = None,
    harmless_lines: frozenset[int] = frozenset(),
    files: Sequence[LogFile] = (),
    elapsed_ms: float = 0.0,
) -> Diagnosis:
    """The verdict and its candidates (see the module docstring for the precedence)."""
    lines = _Evidence(_LineLookup(text, files), _focus_lookup(triage))
    shown_evidence = full_evidence if full_evidence is not None else ranked.evidence
    failures = _masked(ranked, catalog.benign)
    pick = _Picker(catalog, lines, shown_evidence, kind)
    results = [pick(failures, int(i)) for i in _positive(failures)]
    top = int(failures.order[0]) if len(failures.order) else -1
    failure_strong = top >= 0 and bool(failures.strong[top]) and failures.fused[top] > 0
    benign = [
        pick(ranked, i)
        for i in _benign_shown(ranked, catalog.benign, shown_evidence, kind, failure_strong)
    ]
    confidence = results[0].confidence if results else 0.0
    threshold = catalog.threshold
    verdict: Literal["match", "abstain", "benign", "user-code"] = "abstain"
    reason, frame = "", None
    if benign and not failure_strong and not _unexplained(text, harmless_lines, kind):
        verdict = "benign"
    elif not failure_strong and kind == "log" and (ranked.warnings_only or not ranked.signal):
        # A warning says the program went on, and a log with no word of trouble outside its INFO
        # lines says nothing went wrong: without an entry's strong line, neither is evidence of a
        # failure, however much the log resembles one (healthy runs print the same lines).
        reason = WARNINGS_ONLY if ranked.warnings_only else NO_TROUBLE
    elif not failure_strong and kind == "log" and (frame := _user_mistake(text)) is not None:
        verdict = "user-code"
    elif results and confidence >= threshold:
        verdict = "match"
    else:
        reason = (
            "no entry matched"
            if not results
            else f"best confidence {confidence:.2f} is below {threshold:.2f}"
        )
    if verdict == "benign":
        return Diagnosis(
            verdict="benign",
            confidence=benign[0].confidence,
            results=tuple(benign),
            kind=kind,
            triage=triage,
            elapsed_ms=elapsed_ms,
        )
    return Diagnosis(
        verdict=verdict,
        confidence=confidence,
        results=tuple(results),
        kind=kind,
        triage=triage,
        elapsed_ms=elapsed_ms,
        abstain_reason=reason,
        user_frame=frame,
        harmless=tuple(c for c in benign if c.why.fingerprints),
    )


def _user_mistake(text: str) -> UserFrame | None:
    """A bug in the user's own code, or the script refusing its own command line."""
    return user_frame(text) or usage_error(text)


def features_of(ranked: Ranked, entry: int, kind: str) -> Features:
    return candidate_features(
        ranked.scores,
        ranked.strong,
        ranked.fused,
        entry,
        dense_used=ranked.dense_used,
        question=kind == "question",
        signal=ranked.signal,
    )


@dataclass(frozen=True)
class _Picker:
    """Makes the Candidate of one entry of a ranking, its evidence lines located in the input."""

    catalog: Catalog
    lines: _Evidence
    shown_evidence: dict[int, EntryEvidence]
    kind: str

    def __call__(self, ranked: Ranked, index: int) -> Candidate:
        entry = self.catalog.entries[index]
        ev = ranked.evidence.get(index)
        shown = self.shown_evidence.get(index)
        where = self.lines.input
        if shown is None and ev is not None:  # found only in triage's focus lines
            shown, where = ev, self.lines.focus or self.lines.input
        hits = tuple(where.hit(h) for h in (shown.hits if shown and not shown.gated_out else ()))
        features = features_of(ranked, index, self.kind)
        return Candidate(
            id=entry.id,
            title=entry.title,
            score=float(ranked.fused[index]),
            confidence=self.catalog.calibration.confidence(features),
            why=Why(
                fingerprints=hits,
                lexical=float(ranked.scores.lexical_normalized[index]),
                dense=float(ranked.scores.dense[index]),
            ),
            entry=entry,
            features=tuple(features.vector()),
        )


def _positive(ranked: Ranked) -> list[int]:
    """The top entries of a ranking that scored at all."""
    out: list[int] = []
    for index in ranked.order[:TOP_K]:
        if ranked.fused[int(index)] <= 0:
            break
        out.append(int(index))
    return out


def _benign_shown(
    ranked: Ranked,
    benign: np.ndarray,
    shown_evidence: dict[int, EntryEvidence],
    kind: str,
    failure_strong: bool,
) -> list[int]:
    """Benign entries this input shows: those whose strong fingerprint hit a line, best first;
    for a question without such a line, the benign entry that tops the whole ranking."""
    hit = [i for i, ev in shown_evidence.items() if benign[i] and ev.strong]
    if not hit and kind == "question" and not failure_strong and len(ranked.order):
        first = int(ranked.order[0])
        if benign[first] and ranked.fused[first] > 0:
            hit = [first]
    hit.sort(
        key=lambda i: (
            -shown_evidence[i].score if i in shown_evidence else 0.0,
            -float(ranked.fused[i]),
        )
    )
    return hit[:TOP_K]


def _masked(ranked: Ranked, mask: np.ndarray) -> Ranked:
    """The same ranking with the masked entries (benign ones) out of the competition: they score
    zero, so margins and confidences are measured among failure entries only."""
    if not mask.any():
        return ranked
    fused = np.where(mask, 0.0, ranked.fused).astype(ranked.fused.dtype)
    return Ranked(
        ranking(fused),
        fused,
        ranked.scores,
        ranked.strong & ~mask,
        ranked.evidence,
        ranked.dense_used,
        ranked.query,
        ranked.retriever,
        ranked.signal,
    )


# A Python exception line (possibly behind a launcher prefix): "RuntimeError: ...", "KeyError: 'x'".
_EXCEPTION_LINE = re2.compile(
    r"(?m)^(?:\[\w+\]:\s*|\d{1,5}: )?\s*(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b(?::|$)"
)


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

    def __init__(
        self, text: str, files: Sequence[LogFile] = (), origins: Sequence[tuple[str, int]] = ()
    ):
        self._texts = [f.text for f in files] or [text]
        self._names: list[str | None] = [f.name for f in files] or [None]
        self._origins = origins
        self._cache: dict[int, str] = {}
        self._starts: dict[
            int, tuple[bytes, np.ndarray]
        ] = {}  # per text, made when a line of it is asked for
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
            # where it lies in the clipped text, if still whole
            m = compile_linear(h.pattern).search(text)
        else:
            text = text[:HIT_TEXT_CHARS]
        span = (m.start(), m.end()) if m is not None else None
        return FingerprintHit(
            pattern=h.pattern, line=line, text=text, strength=h.strength, file=name, span=span
        )

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
