"""Every store implementation honours the same contract (claims with TTL, history, feedback).

PostgreSQL and Redis run in CI; on a laptop without them those cases skip with a message.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import pytest

from bot.settings import Settings
from bot.store import SplitStore, store_from_settings
from bot.store.base import DiagnosisRecord, Feedback, Store
from bot.store.memory import MemoryStore
from bot.store.sql import SqlStore

POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
REDIS_URL = "redis://127.0.0.1:6379/0"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _postgres(clock: Clock) -> SqlStore:
    try:
        store = SqlStore(POSTGRES_URL, clock=clock)
    except Exception as exc:  # noqa: BLE001 - any connection failure means "not here"
        pytest.skip(f"PostgreSQL not reachable at {POSTGRES_URL} ({type(exc).__name__}); it runs in CI")
    return store


def _redis_claims(clock: Clock) -> SplitStore:
    import redis

    from bot.store.redis_claims import RedisClaims

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError as exc:
        pytest.skip(f"Redis not reachable at {REDIS_URL} ({type(exc).__name__}); it runs in CI")
    return SplitStore(MemoryStore(clock), RedisClaims(REDIS_URL))


@pytest.fixture(params=["memory", "sqlite", "postgres", "redis"])
def store_and_clock(request, tmp_path) -> Iterator[tuple[Store, Clock, str]]:
    clock = Clock()
    kind = request.param
    if kind == "memory":
        store: Store = MemoryStore(clock)
    elif kind == "sqlite":
        store = SqlStore(f"sqlite:///{tmp_path / 'sub' / 'traindoc.db'}", clock=clock)
    elif kind == "postgres":
        store = _postgres(clock)
    else:
        store = _redis_claims(clock)
    yield store, clock, kind
    store.close()


def test_claim_is_first_come_and_expires(store_and_clock):
    store, clock, kind = store_and_clock
    key = f"event:{uuid.uuid4().hex}"
    assert store.claim(key, ttl_s=60)
    assert not store.claim(key, ttl_s=60)
    assert store.claim(f"{key}-other", ttl_s=60)
    if kind == "redis":
        assert store.claim(key + "-short", ttl_s=0.001)
        return  # Redis expires on its own clock; TTL arithmetic is Redis's, not ours
    clock.now += 61
    assert store.claim(key, ttl_s=60)
    assert not store.claim(key, ttl_s=60)


def test_concurrent_claims_have_exactly_one_winner(store_and_clock):
    store, _, _ = store_and_clock
    key = f"msg:C1:{uuid.uuid4().hex}"
    wins: list[bool] = []
    barrier = threading.Barrier(8)

    def contend() -> None:
        barrier.wait()
        wins.append(store.claim(key))

    threads = [threading.Thread(target=contend) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(wins) == [False] * 7 + [True]


def test_history_round_trip_and_recent_order(store_and_clock):
    store, _, _ = store_and_clock
    team = f"T{uuid.uuid4().hex[:10]}"
    first = store.record_diagnosis(
        DiagnosisRecord(
            team_id=team,
            verdict="match",
            confidence=0.9,
            entry_id="a",
            title="A",
            payload={"results": [{"id": "a"}]},
            created_at=1.0,
        )
    )
    store.record_diagnosis(DiagnosisRecord(team_id=team, verdict="abstain", confidence=0.2, created_at=2.0))
    store.record_diagnosis(DiagnosisRecord(team_id="Tother", verdict="match", confidence=0.5, created_at=3.0))
    assert store.get_diagnosis(first.id) == first
    assert store.get_diagnosis("missing") is None
    recent = store.recent_diagnoses(team, 10)
    assert [r.verdict for r in recent] == ["abstain", "match"]
    assert store.recent_diagnoses(team, 1)[0].created_at == 2.0


def test_feedback_round_trip(store_and_clock):
    store, _, _ = store_and_clock
    ref = uuid.uuid4().hex[:16]
    item = Feedback(
        diagnosis_id=ref,
        team_id="T1",
        user="U1",
        channel="C1",
        helpful=False,
        predicted_id="a",
        correct_id="b",
        created_at=9e9,
    )
    store.add_feedback(item)
    assert store.list_feedback(5)[0] == item


def test_store_from_settings_defaults_to_sqlite(tmp_path):
    store = store_from_settings(Settings(database_url=f"sqlite:///{tmp_path / 'x.db'}"))
    try:
        assert isinstance(store, SqlStore) and store.claim("k")
    finally:
        store.close()
    assert (tmp_path / "x.db").exists()


def test_store_from_settings_puts_claims_in_redis_when_configured(tmp_path):
    _redis_claims(Clock()).close()  # skips when Redis is not reachable
    from bot.store.redis_claims import RedisClaims

    store = store_from_settings(Settings(database_url=f"sqlite:///{tmp_path / 'x.db'}", redis_url=REDIS_URL))
    try:
        assert isinstance(store, SplitStore) and isinstance(store.claims, RedisClaims)
        key = f"k-{uuid.uuid4().hex}"
        assert store.claim(key, ttl_s=5) and not store.claim(key, ttl_s=5)
    finally:
        store.close()


def test_history_since_returns_every_team_oldest_first(store_and_clock):
    store, _, _ = store_and_clock
    tag = uuid.uuid4().hex[:8]
    for k, created in enumerate((300.0, 100.0, 200.0)):
        store.record_diagnosis(DiagnosisRecord(team_id=f"T{tag}{k}", verdict="match", confidence=0.9, created_at=created + 1e9))
        store.add_feedback(Feedback(diagnosis_id=f"d{tag}{k}", helpful=False, correct_id="none", note="our NFS", created_at=created + 1e9))
    mine = [r for r in store.diagnoses_since(1e9 + 150) if r.team_id.startswith(f"T{tag}")]
    assert [r.created_at for r in mine] == [1e9 + 200, 1e9 + 300]
    feedback = [f for f in store.feedback_since(1e9 + 150) if f.diagnosis_id.startswith(f"d{tag}")]
    assert [f.created_at for f in feedback] == [1e9 + 200, 1e9 + 300] and feedback[0].note == "our NFS"


def test_in_memory_sqlite_is_shared_by_threads():
    import threading

    from bot.store.sql import SqlStore

    store = SqlStore("sqlite://")
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(store.claim("event:1"))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False, False, False, True]  # one database: exactly one claim wins


def test_sqlite_file_is_private(tmp_path):
    import os
    import stat

    from bot.store.sql import SqlStore

    old = os.umask(0o022)
    try:
        SqlStore(f"sqlite:///{tmp_path / 'sub' / 'traindoc.db'}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "sub" / "traindoc.db").stat().st_mode) == 0o600


@pytest.mark.parametrize("kind", ["memory", "sql"])
def test_purge_drops_expired_claims_and_old_history(kind, tmp_path):
    import time as _time

    from bot.store.base import DiagnosisRecord, Feedback
    from bot.store.memory import MemoryStore
    from bot.store.sql import SqlStore

    clock = [1000.0]
    store = MemoryStore(clock=lambda: clock[0]) if kind == "memory" else SqlStore("sqlite://", clock=lambda: clock[0])
    store.claim("a", ttl_s=10)
    store.claim("b", ttl_s=1000)
    clock[0] += 100
    assert store.purge_expired() == 1
    old = _time.time() - 10 * 86400
    store.record_diagnosis(DiagnosisRecord(team_id="T", verdict="match", confidence=0.9, created_at=old))
    fresh = store.record_diagnosis(DiagnosisRecord(team_id="T", verdict="match", confidence=0.9))
    store.add_feedback(Feedback(diagnosis_id=fresh.id, user="U", helpful=True, created_at=old))
    assert store.purge_history(older_than_s=5 * 86400) == 2
    assert [r.id for r in store.recent_diagnoses("T")] == [fresh.id] and store.list_feedback() == []
