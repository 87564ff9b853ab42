"""Slow work runs on a bounded pool off Bolt's threads: commands ack while logs are being read, a
full queue answers "busy" and retries (never a silent drop), /healthz and /readyz tell them apart."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request

from bot.redact import redact
from bot.slack import messages
from bot.slack.app import create_app
from bot.slack.http import HttpServers, make_http_servers
from bot.slack.metrics import Metrics
from bot.slack.workers import WorkerPool
from tests.fakes import logs
from tests.fakes import slack_payloads as p
from tests.fakes.engine import FakeEngine
from tests.fakes.slack_harness import dispatch, test_settings


def _answered(fake_slack) -> int:
    return sum(logs.OOM_ENTRY in str(c.args.get("blocks")) for c in fake_slack.calls_to("chat.update"))


def test_full_queue_says_busy_and_retries_until_answered(fake_slack, store, monkeypatch):
    redact("warm-up")  # the rule set's one-time compile must not eat the retry budget
    monkeypatch.setattr(messages, "BUSY_RETRY_S", 0.25)  # 12 tries: 3 s for 1.6 s of work ahead
    engine = FakeEngine(delay_s=0.8)  # the first report still runs while the other two arrive
    pool = WorkerPool(1, 1)
    app = create_app(test_settings(fake_slack), store=store, engine=engine, metrics=Metrics(), pool=pool)
    dispatch(app, p.event_body(p.mention(logs.HOST_OOM)))
    fake_slack.wait_for(lambda: pool.busy == 1, what="the worker took the first report")
    for _ in range(2):  # one queued, one finds the queue full
        dispatch(app, p.event_body(p.mention(logs.HOST_OOM)))
    fake_slack.wait_for(lambda: _answered(fake_slack) == 3, timeout=15, what="all three answered")
    busy = [c for c in fake_slack.calls_to("chat.postMessage") if "busy" in str(c.args.get("text"))]
    assert len(busy) == 1 and "retry" in busy[0].args["text"]


def test_commands_ack_while_workers_are_busy(fake_slack, store):
    gate = threading.Event()

    class BlockingEngine(FakeEngine):
        def diagnose(self, report):
            if "host RAM" not in report.text:
                gate.wait(10)  # the mentions' logs: held until the test lets go
            return super().diagnose(report)

    pool = WorkerPool(2, 8)
    app = create_app(
        test_settings(fake_slack, listener_threads=2),
        store=store,
        engine=BlockingEngine(),
        metrics=Metrics(),
        pool=pool,
    )
    try:
        for _ in range(6):  # more slow reports than Bolt has listener threads
            dispatch(app, p.event_body(p.mention(logs.HOST_OOM)))
        started = time.monotonic()
        response = dispatch(app, p.slash_command("host RAM", response_url=fake_slack.response_url()), form=True)
        assert response.status == 200 and time.monotonic() - started < 1.0
        fake_slack.wait_calls("response_url")  # answered while the pool is still held
        assert pool.busy == 2
    finally:
        gate.set()
    fake_slack.wait_for(lambda: _answered(fake_slack) == 6, timeout=15, what="the held reports answered")


def test_healthz_reports_a_stuck_pool_and_readyz_a_full_one(fake_slack, store):
    gate = threading.Event()
    pool = WorkerPool(1, 1, stuck_after_s=0.1)
    app = create_app(test_settings(fake_slack), store=store, engine=FakeEngine(), metrics=Metrics(), pool=pool)
    servers = make_http_servers(app, Metrics(), "127.0.0.1", 0, pool=pool).start()
    base = f"http://127.0.0.1:{HttpServers.port_of(servers.events)}"

    def status(path: str) -> int:
        try:
            with urllib.request.urlopen(base + path, timeout=5) as r:
                return r.status
        except urllib.error.HTTPError as exc:
            return exc.code

    try:
        assert status("/healthz") == 200 and status("/readyz") == 200
        assert pool.submit(lambda: gate.wait(10))
        fake_slack.wait_for(lambda: pool.busy == 1, what="the worker took the task")
        assert pool.submit(lambda: None) and not pool.submit(lambda: None)
        assert status("/readyz") == 503  # the queue is full
        fake_slack.wait_for(lambda: pool.stuck(), what="stuck after 0.1 s")
        assert status("/healthz") == 503
        gate.set()
        fake_slack.wait_for(lambda: not pool.stuck() and pool.busy == 0, what="progress again")
        assert status("/healthz") == 200 and status("/readyz") == 200
    finally:
        gate.set()
        servers.stop()


def test_slow_file_downloads_do_not_hold_the_workers_that_answer_pasted_logs(fake_slack, store):
    # more slow attachments than there are diagnosis workers: they wait in a lane of their own
    slow = [fake_slack.add_file(f"slow{i}.log", logs.SHM_BUS_ERROR.encode(), delay_s=3.0) for i in range(4)]
    app = create_app(
        test_settings(fake_slack, worker_threads=2, download_threads=4),
        store=store,
        engine=FakeEngine(),
        metrics=Metrics(),
    )
    for i, url in enumerate(slow):
        dispatch(app, p.event_body(p.mention("", files=[p.slack_file(f"f{i}.log", url)])))
    fake_slack.wait_for(lambda: len(fake_slack.calls_to("file")) == 4, what="all four downloads started")
    dispatch(app, p.event_body(p.mention(logs.HOST_OOM)))
    # each download takes 3 s: had the pasted log queued behind them, it could not be answered sooner
    fake_slack.wait_for(lambda: _answered(fake_slack) == 1, timeout=2.5, what="the pasted log answered first")
    fake_slack.wait_for(lambda: len(fake_slack.calls_to("chat.update")) == 5, timeout=15, what="all five answered")
