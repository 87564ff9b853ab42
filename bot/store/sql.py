"""SQL store (SQLAlchemy Core): SQLite by default, PostgreSQL when replicas share claims and
history.

Claims are rows keyed by the claim key with an expiry; an expired row is deleted and re-inserted in
one transaction, and the primary key makes exactly one concurrent inserter win.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    delete,
    event,
    insert,
    select,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.pool import StaticPool
from sqlalchemy.sql import Select

from bot.store import migrations
from bot.store.base import CLAIM_TTL_S, DiagnosisRecord, Feedback, Store, new_id

# The tables as the code reads them; the schema itself is created and changed by the Alembic
# revisions in bot/store/migrations (a test checks the two agree).
metadata = MetaData()

claims = Table(
    "traindoc_claims",
    metadata,
    Column("key", String(255), primary_key=True),
    Column("expires_at", Float, nullable=False, index=True),
)
diagnoses = Table(
    "traindoc_diagnoses",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("team_id", String(32), nullable=False, index=True),
    Column("channel", String(32), nullable=False),
    Column("message_ts", String(32), nullable=False),
    Column("user", String(32), nullable=False),
    Column("origin", String(16), nullable=False),
    Column("verdict", String(16), nullable=False),
    Column("confidence", Float, nullable=False),
    Column("entry_id", String(200), nullable=False),
    Column("title", String(300), nullable=False),
    Column("payload", Text, nullable=False),  # JSON
    Column("created_at", Float, nullable=False, index=True),
)
feedback = Table(
    "traindoc_feedback",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("diagnosis_id", String(32), nullable=False, index=True),
    Column("team_id", String(32), nullable=False),
    Column("user", String(32), nullable=False),
    Column("channel", String(32), nullable=False),
    Column("helpful", Boolean, nullable=False),
    Column("predicted_id", String(200), nullable=False),
    Column("correct_id", String(400), nullable=False),
    Column("created_at", Float, nullable=False, index=True),
    Column("note", Text, nullable=False, server_default=""),
)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """Write-ahead log: readers never block the writer, and a commit (one per Slack event, on
    the ack path) does not wait for the disk; a crash loses at most the last commits, never the
    file."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class SqlStore(Store):
    def __init__(
        self, url: str, *, clock: Callable[[], float] = time.time, engine: Engine | None = None
    ):
        self._clock = clock
        parsed = make_url(url)
        sqlite = parsed.drivername.startswith("sqlite")
        in_memory = sqlite and parsed.database in (None, "", ":memory:")
        if sqlite and not in_memory:
            path = Path(parsed.database or "")
            path.parent.mkdir(parents=True, exist_ok=True)
            # answers quote users' logs: the file is the service account's alone (created 0600,
            # never widened)
            os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
        if engine is None and in_memory:
            # one connection shared by every thread: each new one would open its own empty database
            engine = create_engine(
                url, poolclass=StaticPool, connect_args={"check_same_thread": False}
            )
        self.engine = engine or create_engine(url, pool_pre_ping=True)
        if sqlite and not in_memory:
            event.listen(self.engine, "connect", _sqlite_pragmas)
        # The one in-memory connection is not safe for two threads at once: take turns on it.
        self._turns = threading.RLock() if in_memory else None
        migrations.upgrade(self.engine)

    @contextmanager
    def _begin(self) -> Iterator[Connection]:
        with self._turn(), self.engine.begin() as conn:
            yield conn

    @contextmanager
    def _connect(self) -> Iterator[Connection]:
        with self._turn(), self.engine.connect() as conn:
            yield conn

    def _turn(self) -> AbstractContextManager:
        return self._turns if self._turns is not None else nullcontext()

    def claim(self, key: str, ttl_s: float = CLAIM_TTL_S) -> bool:
        now = self._clock()
        try:
            with self._begin() as conn:
                conn.execute(delete(claims).where(claims.c.key == key, claims.c.expires_at <= now))
                conn.execute(insert(claims).values(key=key, expires_at=now + ttl_s))
        except IntegrityError:
            return False
        return True

    def purge_expired(self) -> int:
        with self._begin() as conn:
            return conn.execute(delete(claims).where(claims.c.expires_at <= self._clock())).rowcount

    def purge_history(self, *, older_than_s: float) -> int:
        cutoff = time.time() - older_than_s
        with self._begin() as conn:
            gone = conn.execute(delete(feedback).where(feedback.c.created_at < cutoff)).rowcount
            return (
                gone
                + conn.execute(delete(diagnoses).where(diagnoses.c.created_at < cutoff)).rowcount
            )

    def record_diagnosis(self, record: DiagnosisRecord) -> DiagnosisRecord:
        row = record.model_dump()
        row["payload"] = json.dumps(row["payload"])
        with self._begin() as conn:
            conn.execute(insert(diagnoses).values(**row))
        return record

    def get_diagnosis(self, record_id: str) -> DiagnosisRecord | None:
        with self._connect() as conn:
            row = (
                conn.execute(select(diagnoses).where(diagnoses.c.id == record_id))
                .mappings()
                .first()
            )
        return _record(dict(row)) if row else None

    def recent_diagnoses(self, team_id: str, limit: int = 10) -> list[DiagnosisRecord]:
        query = (
            select(diagnoses)
            .where(diagnoses.c.team_id == team_id)
            .order_by(diagnoses.c.created_at.desc())
            .limit(limit)
        )
        with self._connect() as conn:
            return [_record(dict(row)) for row in conn.execute(query).mappings()]

    def add_feedback(self, item: Feedback) -> None:
        with self._begin() as conn:
            conn.execute(insert(feedback).values(id=new_id(), **item.model_dump()))

    def list_feedback(self, limit: int = 100) -> list[Feedback]:
        return self._feedback(select(feedback).order_by(feedback.c.created_at.desc()).limit(limit))

    def diagnoses_since(self, since: float) -> list[DiagnosisRecord]:
        query = (
            select(diagnoses)
            .where(diagnoses.c.created_at >= since)
            .order_by(diagnoses.c.created_at)
        )
        with self._connect() as conn:
            return [_record(dict(row)) for row in conn.execute(query).mappings()]

    def feedback_since(self, since: float) -> list[Feedback]:
        return self._feedback(
            select(feedback).where(feedback.c.created_at >= since).order_by(feedback.c.created_at)
        )

    def _feedback(self, query: Select[Any]) -> list[Feedback]:
        with self._connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [Feedback(**{k: v for k, v in row.items() if k != "id"}) for row in rows]

    def close(self) -> None:
        self.engine.dispose()


def _record(row: dict) -> DiagnosisRecord:
    row["payload"] = json.loads(row["payload"])
    return DiagnosisRecord(**row)
