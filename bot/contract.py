"""The JSON that `traindoc diagnose --json` and `traindoc ask --json` print: a stable contract for
scripts and dashboards, as pydantic models. `Diagnosis.to_json()` is validated against it, and
docs/json.schema.json is generated from it (`python -m bot.contract > docs/json.schema.json`)."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EvidenceLine(_Out):
    pattern: str = Field(description="The knowledge-base fingerprint (an RE2 regex) that matched.")
    line: int = Field(
        description="1-based line number in `file` (in the whole input when `file` is absent)."
    )
    text: str = Field(description="The matched line, secrets redacted, clipped around the match.")
    file: str | None = Field(
        default=None, description="The input file the line is in, as the user named it."
    )


class Why(_Out):
    fingerprints: list[EvidenceLine]
    lexical: float = Field(description="BM25 score, normalized to 0..1 within this input.")
    dense: float = Field(description="Cosine similarity of the embeddings.")


class Result(_Out):
    id: str = Field(description="The knowledge-base entry id (stable forever).")
    title: str
    score: float = Field(description="The fused retrieval score (not a probability).")
    confidence: float = Field(
        ge=0, le=1, description="Calibrated probability that this entry is right."
    )
    why: Why


class UserFrame(_Out):
    file: str
    line: int = Field(description="0 for kind usage (a command-line error has no line).")
    function: str
    exception: str
    message: str = ""
    kind: Literal["traceback", "usage"] = Field(
        default="traceback",
        description=(
            "traceback: the innermost frame of the last traceback is the user's own file; usage: "
            "the script's argument parser refused its command line (argparse usage error)."
        ),
    )


class Harmless(_Out):
    id: str
    title: str


class Initiating(_Out):
    rank: int | None = None
    node: str | None = None
    line: int
    text: str
    file: str | None = None
    kind: str = ""
    timestamp: str | None = None
    reason: str = ""


class RankGroup(_Out):
    kind: str
    ranks: list[int]
    detail: str = ""


class Triage(_Out):
    initiating: Initiating | None
    no_single_initiator: bool
    collateral_ranks: list[int]
    collateral_groups: list[RankGroup]
    failing_groups: list[RankGroup]
    silent_ranks: list[int]
    ranks_seen: int
    world_size: int | None
    versions: dict[str, str]
    summary: str


class DiagnosisOut(_Out):
    """One answer. `results` is best first (at most 5)."""

    verdict: Literal["match", "abstain", "benign", "user-code"] = Field(
        description=(
            "match: the first result is the answer; abstain: no confident match (results are the "
            "nearest "
            "entries); benign: the notable lines are known-harmless warnings (results are those "
            "entries); "
            "user-code: a plain bug in the user's own code (see user_frame; results are the "
            "nearest entries)."
        )
    )
    confidence: float = Field(ge=0, le=1)
    results: list[Result] = Field(max_length=5)
    elapsed_ms: float
    abstain_reason: str | None = Field(
        default=None,
        description=(
            "Present with verdict abstain: why no entry was answered (confidence below the "
            "threshold, only warnings, nothing that says something went wrong, no entry matched)."
        ),
    )
    user_frame: UserFrame | None = Field(
        default=None, description="Present with verdict user-code."
    )
    harmless: list[Harmless] | None = Field(
        default=None, description="Known-harmless warnings also in a log answered with a failure."
    )
    triage: Triage | None = Field(
        default=None, description="Present when the input carried rank or node structure."
    )


class StoredDiagnosis(DiagnosisOut):
    """What the history store keeps of an answer (bot.slack.records): the contract, plus the
    input's kind and the redacted input it answered."""

    kind: Literal["log", "question"] | None = None
    input: str | None = None


def validated(payload: dict) -> dict:
    """The payload checked against the contract, keys the producer left out still left out."""
    return DiagnosisOut.model_validate(payload).model_dump(mode="json", exclude_unset=True)


def schema() -> dict:
    return DiagnosisOut.model_json_schema()


if __name__ == "__main__":
    print(json.dumps(schema(), indent=1))
