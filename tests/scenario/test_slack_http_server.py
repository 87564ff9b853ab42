"""The HTTP server (Bolt's Starlette adapter on uvicorn) answers hostile requests with 4xx, and
keeps /metrics (with process metrics) off the events port."""

from __future__ import annotations

import http.client
import json

import pytest

from bot.slack.app import create_app
from bot.slack.http import HttpServers, make_http_servers
from bot.slack.metrics import Metrics
from tests.fakes import logs
from tests.fakes import slack_payloads as p
from tests.fakes.slack_api import signed_headers
from tests.fakes.slack_harness import test_settings


@pytest.fixture
def servers(fake_slack, store, fake_engine):
    metrics = Metrics()
    app = create_app(test_settings(fake_slack), store=store, engine=fake_engine, metrics=metrics)
    running = make_http_servers(app, metrics, "127.0.0.1", 0, metrics_port=0).start()
    yield running
    running.stop()


def _request(server, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", HttpServers.port_of(server), timeout=10)
    conn.putrequest(method, path, skip_accept_encoding=True)
    headers = dict(headers or {})
    if body and "Content-Length" not in headers:
        headers["Content-Length"] = str(len(body))
    for key, value in headers.items():
        conn.putheader(key, value)
    conn.endheaders(body or None)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


def test_signed_event_is_acked_and_answered(servers, fake_slack):
    raw = json.dumps(p.event_body(p.mention(logs.HOST_OOM))).encode()
    status, _ = _request(servers.events, "POST", "/slack/events", raw, signed_headers(raw))
    assert status == 200
    assert logs.OOM_ENTRY in str(fake_slack.wait_calls("chat.update")[0].args["blocks"])


@pytest.mark.parametrize(
    "headers, body, expected",
    [
        ({"Content-Length": "abc"}, b"", 400),
        ({"Content-Length": "-5"}, b"", 400),
        ({"Content-Length": str(2 << 20)}, b"", 413),
    ],
)
def test_bad_content_length_is_refused(servers, headers, body, expected):
    status, _ = _request(servers.events, "POST", "/slack/events", body, headers)
    assert status == expected


def test_invalid_utf8_and_bad_timestamp(servers):
    raw = b'{"type": "event_callback", "x": "\xff\xfe"}'
    assert _request(servers.events, "POST", "/slack/events", raw, signed_headers(raw))[0] == 400
    good = json.dumps(p.event_body(p.mention("hi"))).encode()
    headers = {**signed_headers(good), "X-Slack-Request-Timestamp": "not-a-number"}
    assert _request(servers.events, "POST", "/slack/events", good, headers)[0] == 401
    unsigned = {"Content-Type": "application/json"}
    assert _request(servers.events, "POST", "/slack/events", good, unsigned)[0] == 401


def test_metrics_live_on_their_own_port(servers):
    assert _request(servers.events, "GET", "/metrics")[0] == 404
    status, body = _request(servers.metrics, "GET", "/metrics")
    assert status == 200 and b"traindoc_slack_events_total" in body and b"process_resident_memory_bytes" in body
    assert _request(servers.events, "GET", "/healthz") == (200, b"ok\n")
    assert _request(servers.events, "GET", "/readyz") == (200, b"ready\n")
