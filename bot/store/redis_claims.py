"""Dedup claims in Redis: SET key NX PX ttl, atomic across every replica."""

from __future__ import annotations

from bot.store.base import CLAIM_TTL_S, Claims

PREFIX = "traindoc:claim:"


class RedisClaims(Claims):
    def __init__(self, url: str, *, client: object | None = None):
        import redis

        self.client = client or redis.Redis.from_url(
            url, socket_timeout=5, socket_connect_timeout=5
        )

    def claim(self, key: str, ttl_s: float = CLAIM_TTL_S) -> bool:
        return bool(self.client.set(PREFIX + key, b"1", nx=True, px=max(1, int(ttl_s * 1000))))  # type: ignore[attr-defined]

    def close(self) -> None:
        self.client.close()  # type: ignore[attr-defined]
