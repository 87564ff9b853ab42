"""End-to-end tier: the real app over loopback HTTP and Socket Mode against the fake Web API.

The engine is the real pipeline (bot.diagnose.Engine), built once per session with its index in a
session temp dir; until the pipeline exists the fake engine stands in, so these tests stay runnable.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from bot.slack.app import create_app
from bot.slack.http import HttpServers, make_http_servers
from bot.slack.metrics import Metrics
from bot.store.memory import MemoryStore
from tests.fakes.engine import FakeEngine
from tests.fakes.slack_api import FakeSlackAPI, signed_headers
from tests.fakes.slack_harness import test_settings


@pytest.fixture(scope="session")
def engine(request: pytest.FixtureRequest) -> Any:
    """The real engine over the bundled KB: the suite-wide `bundled_engine`, its index built once per session."""
    if os.environ.get("TRAINDOC_TEST_FAKE_ENGINE"):  # developing the Slack shell while the pipeline is in flux
        return FakeEngine()
    engine = request.getfixturevalue("bundled_engine")
    # Pay the model's first-inference cost here, so answer deadlines measure steady-state latency.
    from bot.ingest import report_from_text

    engine.diagnose(report_from_text("warm-up: why does training hang at the first allreduce?", origin="warmup"))
    return engine


@dataclass
class HttpBot:
    fake: FakeSlackAPI
    url: str
    store: MemoryStore
    metrics: Metrics
    metrics_url: str = ""  # /metrics is served on its own port

    def post(
        self, raw: str, *, form: bool = False, headers: dict[str, str] | None = None, **sign: Any
    ) -> tuple[int, bytes]:
        content_type = "application/x-www-form-urlencoded" if form else "application/json"
        sent = headers if headers is not None else signed_headers(raw, content_type=content_type, **sign)
        request = urllib.request.Request(self.url + "/slack/events", data=raw.encode(), headers=sent, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def post_event(self, body: dict[str, Any], **sign: Any) -> int:
        return self.post(json.dumps(body), **sign)[0]

    def get(self, path: str) -> tuple[int, bytes]:
        base = self.metrics_url if path == "/metrics" else self.url
        try:
            with urllib.request.urlopen(base + path, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()


@pytest.fixture(scope="module")
def http_bot(engine: Any) -> Iterator[HttpBot]:
    with FakeSlackAPI() as fake:
        store, metrics = MemoryStore(), Metrics()
        app = create_app(test_settings(fake), store=store, engine=engine, metrics=metrics)
        servers = make_http_servers(app, metrics, "127.0.0.1", 0, metrics_port=0).start()
        try:
            yield HttpBot(
                fake,
                f"http://127.0.0.1:{HttpServers.port_of(servers.events)}",
                store,
                metrics,
                metrics_url=f"http://127.0.0.1:{HttpServers.port_of(servers.metrics)}",
            )
        finally:
            servers.stop()


@pytest.fixture
def bot(http_bot: HttpBot) -> HttpBot:
    http_bot.fake.reset()
    return http_bot


def elapsed_since(start: float) -> float:
    return time.monotonic() - start
