"""The real app over Socket Mode: apps.connections.open (fake Web API) hands out a local WebSocket."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from urllib.parse import parse_qsl

import pytest
from slack_bolt.adapter.socket_mode import SocketModeHandler

from bot.slack.app import create_app
from bot.slack.metrics import Metrics
from bot.store.memory import MemoryStore
from tests.fakes import logs
from tests.fakes import slack_payloads as p
from tests.fakes.slack_api import APP_TOKEN, FakeSlackAPI
from tests.fakes.slack_harness import test_settings
from tests.fakes.socket_mode import FakeSocketModeServer

# The first e2e test builds the session index (minutes on a busy 2-core machine).
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def socket_bot(engine) -> Iterator[tuple[FakeSlackAPI, FakeSocketModeServer]]:
    with FakeSlackAPI() as fake, FakeSocketModeServer() as server:
        fake.socket_url = server.url
        # Socket Mode needs no signing secret: the app must start without one.
        settings = test_settings(fake, SLACK_SIGNING_SECRET="")
        app = create_app(settings, store=MemoryStore(), engine=engine, metrics=Metrics())
        handler = SocketModeHandler(app, APP_TOKEN)
        handler.connect()
        try:
            server.wait_connected()
            yield fake, server
        finally:
            handler.close()


def test_mention_over_socket_mode_is_answered_once_and_retry_dropped(socket_bot):
    fake, server = socket_bot
    event = p.mention(logs.SHM_BUS_ERROR)
    body = p.event_body(event)
    started = time.monotonic()
    server.wait_ack(server.send_event(body))
    update = fake.wait_calls("chat.update", timeout=30)[0]
    print(f"\nsocket mode: event -> answer {1000 * (update.at - started):.0f} ms")
    assert f"`{logs.SHM_ENTRY}`" in json.dumps(update.args["blocks"])
    assert fake.calls_to("chat.postMessage")[0].args["thread_ts"] == event["ts"]
    assert fake.calls_to("apps.connections.open")[0].headers["authorization"] == f"Bearer {APP_TOKEN}"
    server.wait_ack(server.send_event(body, retry_attempt=1))
    copy = p.message(event["text"], ts=event["ts"], channel=p.CHANNEL, channel_type="im")
    server.wait_ack(server.send_event(p.event_body(copy)))
    # A later, unrelated event is answered: everything before it has been processed.
    server.wait_ack(server.send_event(p.event_body(p.mention(logs.HOST_OOM))))
    fake.wait_calls("chat.update", 2, timeout=30)
    assert len(fake.calls_to("chat.postMessage")) == 2


def test_slash_command_over_socket_mode_answers_ephemerally(socket_bot):
    fake, server = socket_bot
    command = dict(parse_qsl(p.slash_command(logs.HOST_OOM, response_url=fake.response_url("sock"))))
    server.wait_ack(server.send_interactive(command, kind="slash_commands"))
    answer = fake.wait_for(
        lambda: [c for c in fake.calls_to("response_url") if c.path.endswith("/sock")], timeout=30, what="answer"
    )[0]
    assert answer.args["response_type"] == "ephemeral" and f"`{logs.OOM_ENTRY}`" in json.dumps(answer.args["blocks"])


def test_socket_mode_probes_follow_the_socket(engine):
    import urllib.error
    import urllib.request

    from bot.slack.http import HttpServers, make_probe_server
    from bot.slack.workers import WorkerPool

    def status(port: int, path: str) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.status
        except urllib.error.HTTPError as exc:
            return exc.code

    with FakeSlackAPI() as fake, FakeSocketModeServer() as server:
        fake.socket_url = server.url
        metrics = Metrics()
        app = create_app(test_settings(fake, SLACK_SIGNING_SECRET=""), store=MemoryStore(), engine=engine, metrics=metrics)
        handler = SocketModeHandler(app, APP_TOKEN)
        handler.connect()
        server.wait_connected()
        probes = make_probe_server(metrics, "127.0.0.1", 0, pool=WorkerPool(1, 4), connected=handler.client.is_connected)
        probes.start()
        try:
            assert probes.metrics is not None
            port = HttpServers.port_of(probes.metrics)
            assert status(port, "/healthz") == 200 and status(port, "/readyz") == 200
            assert status(port, "/metrics") == 200
            handler.close()  # the socket is gone: the pod is not healthy any more
            deadline = time.monotonic() + 10
            while status(port, "/healthz") != 503 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert status(port, "/healthz") == 503
        finally:
            handler.close()
            probes.stop()
