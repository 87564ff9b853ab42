"""Persistence for the Slack surface: dedup claims, answer history, feedback (see base.py)."""

from __future__ import annotations

from bot.settings import Settings
from bot.store.base import Claims, DiagnosisRecord, Feedback, History, SplitStore, Store
from bot.store.memory import MemoryStore

__all__ = [
    "Claims",
    "DiagnosisRecord",
    "Feedback",
    "History",
    "MemoryStore",
    "SplitStore",
    "Store",
    "store_from_settings",
]


def store_from_settings(settings: Settings) -> Store:
    """SQL history at Settings.resolved_database_url() (SQLite by default), claims in Redis when
    configured."""
    from bot.store.sql import SqlStore

    store: Store = SqlStore(settings.resolved_database_url())
    if settings.redis_url:
        from bot.store.redis_claims import RedisClaims

        store = SplitStore(store, RedisClaims(settings.redis_url))
    return store
