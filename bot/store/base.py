"""What the Slack surface persists, behind small abstract bases: dedup claims, answer history,
feedback.

Implementations: memory (tests, one process), SQL (SQLite default, PostgreSQL for replicas), Redis
(claims only). `SplitStore` pairs a history store with a separate claims store.
"""

from __future__ import annotations

import time
import uuid
from abc import ABC, abstractmethod
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

CLAIM_TTL_S = 15 * 60  # Slack retries for ~6 minutes; keep claims well beyond that


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def new_id() -> str:
    return uuid.uuid4().hex[:16]


class DiagnosisRecord(_Frozen):
    """One answer the bot gave, enough to explain it later ("Why this match", App Home,
    feedback)."""

    id: str = Field(default_factory=new_id)
    team_id: str = ""
    channel: str = ""
    message_ts: str = ""  # the user's message (or "" for slash commands)
    user: str = ""
    origin: str = ""  # mention | dm | passive | file | command
    verdict: str
    confidence: float
    entry_id: str = ""
    title: str = ""
    # Diagnosis.to_json(), input already redacted
    payload: dict[str, Any] = Field(default_factory=dict)
    created_at: float = Field(default_factory=time.time)


class Feedback(_Frozen):
    diagnosis_id: str = ""
    team_id: str = ""
    user: str = ""
    channel: str = ""
    helpful: bool
    predicted_id: str = ""
    correct_id: str = ""
    note: str = ""  # the user's words beside the pick (redacted)
    created_at: float = Field(default_factory=time.time)

    @property
    def corrected(self) -> bool:
        return not self.helpful and bool(self.correct_id)


NONE_OF_THESE = "none"  # the feedback modal's "none of these": no entry answers this input


class Claims(ABC):
    @abstractmethod
    def claim(self, key: str, ttl_s: float = CLAIM_TTL_S) -> bool:
        """True for the first caller of `key` within its TTL (across every replica sharing the
        store)."""

    def purge_expired(self) -> int:
        """Drop expired claims; the number dropped (stores whose claims expire by themselves: 0)."""
        return 0

    def close(self) -> None:  # noqa: B027 - optional: stores without connections keep it
        """Release connections."""


class History(ABC):
    @abstractmethod
    def record_diagnosis(self, record: DiagnosisRecord) -> DiagnosisRecord: ...

    @abstractmethod
    def get_diagnosis(self, record_id: str) -> DiagnosisRecord | None: ...

    @abstractmethod
    def recent_diagnoses(self, team_id: str, limit: int = 10) -> list[DiagnosisRecord]:
        """Newest first."""

    @abstractmethod
    def add_feedback(self, feedback: Feedback) -> None: ...

    @abstractmethod
    def list_feedback(self, limit: int = 100) -> list[Feedback]:
        """Newest first."""

    @abstractmethod
    def diagnoses_since(self, since: float) -> list[DiagnosisRecord]:
        """Every team's answers created at or after `since` (epoch seconds), oldest first."""

    @abstractmethod
    def feedback_since(self, since: float) -> list[Feedback]:
        """Feedback created at or after `since`, oldest first."""

    @abstractmethod
    def purge_history(self, *, older_than_s: float) -> int:
        """Delete answers and feedback older than `older_than_s` seconds; the number deleted."""

    def close(self) -> None:  # noqa: B027 - optional: stores without connections keep it
        """Release connections."""


class Store(Claims, History, ABC):
    """Claims and history in one place (what the Slack app takes)."""


class SplitStore(Store):
    """History in one store, claims in another (e.g. PostgreSQL history, Redis claims)."""

    def __init__(self, history: History, claims: Claims):
        self.history = history
        self.claims = claims

    def claim(self, key: str, ttl_s: float = CLAIM_TTL_S) -> bool:
        return self.claims.claim(key, ttl_s)

    def record_diagnosis(self, record: DiagnosisRecord) -> DiagnosisRecord:
        return self.history.record_diagnosis(record)

    def get_diagnosis(self, record_id: str) -> DiagnosisRecord | None:
        return self.history.get_diagnosis(record_id)

    def recent_diagnoses(self, team_id: str, limit: int = 10) -> list[DiagnosisRecord]:
        return self.history.recent_diagnoses(team_id, limit)

    def add_feedback(self, feedback: Feedback) -> None:
        self.history.add_feedback(feedback)

    def list_feedback(self, limit: int = 100) -> list[Feedback]:
        return self.history.list_feedback(limit)

    def diagnoses_since(self, since: float) -> list[DiagnosisRecord]:
        return self.history.diagnoses_since(since)

    def feedback_since(self, since: float) -> list[Feedback]:
        return self.history.feedback_since(since)

    def purge_expired(self) -> int:
        return self.claims.purge_expired()

    def purge_history(self, *, older_than_s: float) -> int:
        return self.history.purge_history(older_than_s=older_than_s)

    def close(self) -> None:
        self.history.close()
        self.claims.close()
