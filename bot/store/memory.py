"""In-memory store: one process, lost on restart (tests, and a single Socket Mode replica)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from bot.store.base import CLAIM_TTL_S, DiagnosisRecord, Feedback, Store

MAX_RECORDS = 10_000  # bounded: a long-running bot must not grow without limit


class MemoryStore(Store):
    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._claims: dict[str, float] = {}  # key -> expiry on `clock`
        self._records: dict[str, DiagnosisRecord] = {}
        self._feedback: list[Feedback] = []

    def claim(self, key: str, ttl_s: float = CLAIM_TTL_S) -> bool:
        now = self._clock()
        with self._lock:
            expiry = self._claims.get(key)
            if expiry is not None and expiry > now:
                return False
            if len(self._claims) > MAX_RECORDS:
                self._claims = {k: v for k, v in self._claims.items() if v > now}
            self._claims[key] = now + ttl_s
            return True

    def purge_expired(self) -> int:
        now = self._clock()
        with self._lock:
            before = len(self._claims)
            self._claims = {k: v for k, v in self._claims.items() if v > now}
            return before - len(self._claims)

    def purge_history(self, *, older_than_s: float) -> int:
        cutoff = time.time() - older_than_s
        with self._lock:
            old = [k for k, r in self._records.items() if r.created_at < cutoff]
            for k in old:
                del self._records[k]
            kept = [f for f in self._feedback if f.created_at >= cutoff]
            gone = len(old) + len(self._feedback) - len(kept)
            self._feedback = kept
            return gone

    def record_diagnosis(self, record: DiagnosisRecord) -> DiagnosisRecord:
        with self._lock:
            self._records[record.id] = record
            while len(self._records) > MAX_RECORDS:
                self._records.pop(next(iter(self._records)))
        return record

    def get_diagnosis(self, record_id: str) -> DiagnosisRecord | None:
        with self._lock:
            return self._records.get(record_id)

    def recent_diagnoses(self, team_id: str, limit: int = 10) -> list[DiagnosisRecord]:
        with self._lock:
            mine = [r for r in self._records.values() if r.team_id == team_id]
        return sorted(mine, key=lambda r: r.created_at, reverse=True)[:limit]

    def add_feedback(self, feedback: Feedback) -> None:
        with self._lock:
            self._feedback.append(feedback)
            del self._feedback[:-MAX_RECORDS]

    def list_feedback(self, limit: int = 100) -> list[Feedback]:
        with self._lock:
            return list(reversed(self._feedback))[:limit]

    def diagnoses_since(self, since: float) -> list[DiagnosisRecord]:
        with self._lock:
            return sorted(
                (r for r in self._records.values() if r.created_at >= since),
                key=lambda r: r.created_at,
            )

    def feedback_since(self, since: float) -> list[Feedback]:
        with self._lock:
            return sorted(
                (f for f in self._feedback if f.created_at >= since), key=lambda f: f.created_at
            )
