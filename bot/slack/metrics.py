"""Prometheus metrics of the Slack surface, in a registry of their own (one per app,
test-friendly)."""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    ProcessCollector,
    generate_latest,
)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)  # RSS, CPU, open fds of this process
        self.events = Counter(
            "traindoc_slack_events", "Slack events received", ["type"], registry=self.registry
        )
        self.duplicates = Counter(
            "traindoc_slack_duplicates",
            "Deliveries dropped as duplicates",
            ["key"],
            registry=self.registry,
        )
        self.answers = Counter(
            "traindoc_slack_answers",
            "Answers posted",
            ["surface", "verdict"],
            registry=self.registry,
        )
        self.failures = Counter(
            "traindoc_slack_failures", "Listeners that failed", ["surface"], registry=self.registry
        )
        self.api_errors = Counter(
            "traindoc_slack_api_errors",
            "Web API calls that failed after retries",
            ["method"],
            registry=self.registry,
        )
        self.api_retries = Counter(
            "traindoc_slack_api_retries",
            "Web API calls retried",
            ["reason"],
            registry=self.registry,
        )
        self.busy = Counter(
            "traindoc_slack_busy", "Reports that found the work queue full", registry=self.registry
        )
        self.latency = Histogram(
            "traindoc_slack_answer_seconds",
            "From receiving an event to posting its answer",
            buckets=(0.25, 0.5, 1, 2, 3, 5, 8, 13, 30),
            registry=self.registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
