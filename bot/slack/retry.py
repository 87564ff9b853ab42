"""Retries for every Web API call: 429 (honouring Retry-After), 5xx, dropped connections and
timeouts, with exponential backoff and a bounded number of attempts; each retry is counted."""

from __future__ import annotations

import random
from typing import Any, TypeVar
from urllib.error import URLError

from slack_sdk.http_retry import RetryHandler
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.jitter import Jitter

from bot.slack.metrics import Metrics

H = TypeVar("H", bound=RetryHandler)

CONNECTION_RETRIES = 3
SERVER_ERROR_RETRIES = 3
RATE_LIMIT_RETRIES = 5  # Retry-After is usually 1-30 s: five waits stay within Slack's patience


class ProportionalJitter(Jitter):
    """Up to +50 % of the interval. slack_sdk's default adds up to a whole second to every
    wait, which would make a single 5xx cost the user more than the answer itself."""

    def recalculate(self, duration: float) -> float:
        return duration * (1 + 0.5 * random.random())


# 0.25, 0.5, 1 s (+<=50 %)
BACKOFF = BackoffRetryIntervalCalculator(backoff_factor=0.25, jitter=ProportionalJitter())


def _counted(base: type[H], reason: str, metrics: Metrics | None) -> type[H]:
    class Counted(base):  # type: ignore[misc, valid-type]
        def prepare_for_next_attempt(self, **kwargs: Any) -> None:
            if metrics is not None:
                metrics.api_retries.labels(reason=reason).inc()
            super().prepare_for_next_attempt(**kwargs)

    Counted.__name__ = f"Counted{base.__name__}"
    return Counted


def retry_handlers(metrics: Metrics | None = None) -> list[RetryHandler]:
    connection = _counted(ConnectionErrorRetryHandler, "connection", metrics)
    server = _counted(ServerErrorRetryHandler, "server_error", metrics)
    rate = _counted(RateLimitErrorRetryHandler, "rate_limited", metrics)
    return [
        connection(
            max_retry_count=CONNECTION_RETRIES,
            interval_calculator=BACKOFF,
            error_types=[URLError, ConnectionError, TimeoutError, OSError],
        ),
        server(max_retry_count=SERVER_ERROR_RETRIES, interval_calculator=BACKOFF),
        rate(max_retry_count=RATE_LIMIT_RETRIES),
    ]
