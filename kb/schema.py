"""The pydantic models of one knowledge-base entry (docs/kb-authoring.md)."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Category = Literal[
    "communication",
    "distributed-training",
    "launch-and-elastic",
    "memory",
    "checkpoint",
    "storage-and-io",
    "data-loading",
    "hardware",
    "environment",
    "compilation",
    "numerics",
    "inference-serving",
    "performance",
]

CATEGORIES: tuple[str, ...] = get_args(Category)

ID_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Fingerprint(_Frozen):
    """An exact string (as an RE2-compatible regex) that real software prints."""

    pattern: str = Field(min_length=4)
    # strong: decides alone; supporting: only adds weight beside other evidence.
    strength: Literal["strong", "supporting"] = "strong"
    # Which program/version prints it, e.g. "NCCL >=2.24 transport/net_ib.cc".
    source: str = ""


class Reference(_Frozen):
    title: str = Field(min_length=3)
    url: str = Field(pattern=r"^https?://\S+$")


class Entry(_Frozen):
    id: str = Field(pattern=ID_PATTERN)
    title: str = Field(min_length=5, max_length=150)
    # failure: a root cause to fix. benign: a known-harmless warning or notice, answered as
    # harmless and never as a root cause (its root_cause says what the line means, its fix how
    # to silence it, and when_it_matters the cases where it is not harmless).
    kind: Literal["failure", "benign"] = "failure"
    category: Category
    tags: tuple[str, ...] = ()
    summary: str = Field(min_length=10)
    symptoms: tuple[str, ...] = Field(min_length=1)
    fingerprints: tuple[Fingerprint, ...] = ()
    # Regexes gating the fingerprint evidence: all of `requires` must appear somewhere in the
    # input, and none of `excludes`, for this entry's fingerprints to count.
    requires: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    # A follow-on failure (watchdog timeouts, ChildFailedError summaries, "engine dead"): when a
    # root-cause entry also has strong evidence in the same log, the root cause ranks first.
    collateral: bool = False
    # Findings of rank-aware triage this entry explains when no error line names the cause:
    # "desync" (ranks wait in different collectives), "checkpoint" (the one rank that did not time
    # out was saving), "stalled" (one rank never reached the collective), "silent".
    explains: tuple[Literal["desync", "checkpoint", "stalled", "silent"], ...] = ()
    root_cause: tuple[str, ...] = Field(min_length=1)
    fix: tuple[str, ...] = Field(min_length=1)
    confirm: tuple[str, ...] = Field(min_length=1)
    prevention: tuple[str, ...] = ()
    affects: tuple[str, ...] = ()
    # Version ranges where the behaviour holds, e.g. {"nccl": "<2.19", "torch": ">=2.2"}.
    applies_to: dict[str, str] = Field(default_factory=dict)
    siblings: tuple[str, ...] = ()
    references: tuple[Reference, ...] = Field(min_length=1)
    samples: tuple[str, ...] = Field(min_length=2)
    questions: tuple[str, ...] = Field(min_length=1)
    when_it_matters: tuple[str, ...] = ()
    # A team's own entry (TRAINDOC_KB_EXTRA) may replace a bundled one: it names the bundled id
    # here.
    overrides: str | None = Field(default=None, pattern=ID_PATTERN)

    @model_validator(mode="after")
    def _benign_says_when_it_matters(self) -> Entry:
        if self.kind == "benign" and not self.when_it_matters:
            raise ValueError("a benign entry says when_it_matters (when the line is not harmless)")
        if self.kind == "benign" and self.collateral:
            raise ValueError("a benign entry cannot be collateral")
        return self

    @field_validator("siblings")
    @classmethod
    def _siblings_are_ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        import re

        for sibling in value:
            if not re.match(ID_PATTERN, sibling):
                raise ValueError(f"sibling {sibling!r} is not an entry id")
        return value

    @field_validator("samples", "questions", "symptoms", "fix", "root_cause", "confirm")
    @classmethod
    def _no_blank_items(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not item.strip() for item in value):
            raise ValueError("blank item")
        return value

    @property
    def strong_patterns(self) -> tuple[str, ...]:
        return tuple(f.pattern for f in self.fingerprints if f.strength == "strong")
