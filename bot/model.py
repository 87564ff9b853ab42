"""The frozen types that flow through the pipeline, shared by the pipeline, renderers and surfaces.

Renderers import these, never the pipeline. `Diagnosis.to_json()` is the stable machine-readable
contract of docs/json.md (bot/contract.py).
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from kb.schema import Entry


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LogFile(_Frozen):
    """One input text: a pasted message, an attached file, a file given to the CLI."""

    name: str = "<input>"
    text: str


class Report(_Frozen):
    """What the user gave us, normalized and redacted (the output of ingest)."""

    files: tuple[LogFile, ...]
    kind: Literal["log", "question"]
    question: str = ""  # the user's own words around a pasted log, if any
    origin: str = "cli"

    @property
    def text(self) -> str:
        return "\n".join(f.text for f in self.files)


class FingerprintHit(_Frozen):
    pattern: str
    line: int  # 1-based line number in `file` (in the whole input when `file` is None)
    text: str  # the matched line, redacted and clipped around the match
    strength: Literal["strong", "supporting"] = "strong"
    file: str | None = None  # the input file the line is in, as the user named it
    span: tuple[int, int] | None = None  # where the pattern matched inside `text`

    def excerpt(self, limit: int) -> str:
        """`text` in at most `limit` characters, always keeping the matched part."""
        from index.query_text import clip_around

        start, end = self.span or (0, 0)
        return clip_around(self.text, start, end, limit)


class Why(_Frozen):
    fingerprints: tuple[FingerprintHit, ...] = ()
    lexical: float = 0.0
    dense: float = 0.0


class Candidate(_Frozen):
    id: str
    title: str
    score: float
    confidence: float
    why: Why = Why()
    entry: Entry = Field(exclude=True, repr=False)
    # What the confidence model saw (index.fusion.Features.vector()): calibration reads it from the
    # production diagnosis instead of re-ranking on a side path. Never rendered.
    features: tuple[float, ...] = Field(default=(), exclude=True, repr=False)


class Initiating(_Frozen):
    """The rank whose failure started it all, and its first root-type error line."""

    rank: int | None = None
    node: str | None = None
    line: int  # 1-based line in `file`
    text: str  # the line without its prefixes, clipped around what triage matched
    file: str | None = None
    kind: str = ""  # e.g. "oom", "xid", "illegal-memory-access", "exception"
    timestamp: str | None = None
    reason: str = ""  # how triage singled this rank out, e.g. "earliest root-type error (12:03:11)"


class CollateralGroup(_Frozen):
    """Ranks that failed as a consequence, grouped by what they reported."""

    kind: str  # e.g. "watchdog-timeout"
    ranks: tuple[int, ...]
    detail: str = ""  # e.g. "ALLREDUCE SeqNum 8812"


class Triage(_Frozen):
    initiating: Initiating | None = None
    no_single_initiator: bool = False  # all ranks failed at once: say so plainly
    collateral_ranks: tuple[int, ...] = ()
    collateral_groups: tuple[CollateralGroup, ...] = ()
    silent_ranks: tuple[int, ...] = ()  # ranks of the world that logged nothing
    # Ranks that hit a root-type error of their own besides (or, with no single initiator, instead
    # of) the initiator: not consequences, so not collateral.
    failing_groups: tuple[CollateralGroup, ...] = ()
    ranks_seen: int = 0
    world_size: int | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    # The lines retrieval should run on: the initiator's evidence, not the loudest collateral.
    focus_text: str = ""
    focus_origins: tuple[tuple[str, int], ...] = ()  # (file, line) each focus line was taken from
    summary: str = ""


class UserFrame(_Frozen):
    """The innermost frame of a traceback that lies in the user's own code, and its exception; or
    (kind "usage") a script's command-line parser refusing its arguments, which has no line."""

    file: str
    line: int  # 0 for kind "usage"
    function: str
    exception: str  # e.g. "KeyError"
    message: str = ""  # e.g. "'label'"
    kind: Literal["traceback", "usage"] = "traceback"

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def headline(self) -> str:
        """`train.py:88, KeyError: 'label'`"""
        name = self.file.replace("\\", "/").rsplit("/", 1)[-1]
        at = f"{name}:{self.line}" if self.line else name
        return f"{at}, {self.exception}" + (f": {self.message}" if self.message else "")


Verdict = Literal["match", "abstain", "benign", "user-code"]


class Diagnosis(_Frozen):
    """match: a failure entry answers; abstain: none does confidently; benign: the notable lines
    are known-harmless warnings (`results` holds the benign entries); user-code: a plain bug in
    the user's own code (`user_frame`; `results` holds the nearest failure entries, not answers)."""

    verdict: Verdict
    confidence: float
    results: tuple[Candidate, ...]  # best first, at most 5
    kind: Literal["log", "question"] = "log"
    triage: Triage | None = None
    elapsed_ms: float = 0.0
    abstain_reason: str = ""
    user_frame: UserFrame | None = None
    # Benign entries whose lines are also in a log answered with a failure (folded into one line).
    harmless: tuple[Candidate, ...] = ()

    @property
    def best(self) -> Candidate | None:
        return self.results[0] if self.results else None

    def to_json(self) -> dict[str, Any]:
        """The JSON contract of bot/contract.py (docs/json.md), validated."""
        out: dict[str, Any] = {
            "verdict": self.verdict,
            "confidence": round(self.confidence, 4),
            "results": [
                {
                    "id": c.id,
                    "title": c.title,
                    "score": round(c.score, 4),
                    "confidence": round(c.confidence, 4),
                    "why": {
                        "fingerprints": [
                            {"pattern": h.pattern, "line": h.line, "text": h.text}
                            | ({"file": h.file} if h.file is not None else {})
                            for h in c.why.fingerprints
                        ],
                        "lexical": round(c.why.lexical, 4),
                        "dense": round(c.why.dense, 4),
                    },
                }
                for c in self.results
            ],
            "elapsed_ms": round(self.elapsed_ms, 2),
        }
        if self.verdict == "abstain" and self.abstain_reason:
            out["abstain_reason"] = self.abstain_reason
        if self.user_frame is not None:
            out["user_frame"] = self.user_frame.model_dump()
        if self.harmless:
            out["harmless"] = [{"id": c.id, "title": c.title} for c in self.harmless]
        if self.triage is not None:
            t = self.triage
            out["triage"] = {
                "initiating": t.initiating.model_dump(exclude_none=True) if t.initiating else None,
                "no_single_initiator": t.no_single_initiator,
                "collateral_ranks": list(t.collateral_ranks),
                "collateral_groups": [g.model_dump() for g in t.collateral_groups],
                "failing_groups": [g.model_dump() for g in t.failing_groups],
                "silent_ranks": list(t.silent_ranks),
                "ranks_seen": t.ranks_seen,
                "world_size": t.world_size,
                "versions": dict(t.versions),
                "summary": t.summary,
            }
        from bot.contract import validated

        return validated(out)


class DiagnosisEngine(Protocol):
    """What the surfaces need from the pipeline (bot.diagnose.Engine implements it)."""

    def diagnose(self, report: Report) -> Diagnosis: ...

    def entry(self, entry_id: str) -> Entry | None: ...

    def entries(self) -> tuple[Entry, ...]: ...
