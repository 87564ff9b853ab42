"""Load against the fake Slack Web API on loopback, with faults: events/s of distinct pasted logs
through the real HTTP server, 10 % of Web API calls answered 500 or 429; meanwhile 8 slow file
downloads, one 50 MB log, and slash commands whose ack time is measured.

Reports lost answers, duplicates, error notices, ack p99, answer p95, slash-command ack max, RSS.
The engine is the test suite's fake (the pipeline's own speed is bench/triage.py's and
bench/redact.py's subject); --real-engine uses the bundled knowledge base.

    python bench/load.py [--rate 20] [--seconds 60] [--fault-rate 0.1] [--json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import emit
from bot.slack.app import create_app
from bot.slack.http import HttpServers, make_http_servers
from bot.slack.metrics import Metrics
from bot.store.memory import MemoryStore
from tests.fakes import logs
from tests.fakes import slack_payloads as p
from tests.fakes.engine import FakeEngine
from tests.fakes.slack_api import FakeSlackAPI, signed_headers
from tests.fakes.slack_harness import test_settings


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / (1 << 20)


def pct(values: list[float], q: float) -> float:
    return round(statistics.quantiles(values, n=100)[q - 1] * 1000, 1) if len(values) > 1 else 0.0


def post(port: int, raw: bytes, content_type: str = "application/json") -> tuple[int, float]:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/slack/events", raw, signed_headers(raw, content_type=content_type))
    status = conn.getresponse().status
    conn.close()
    return status, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--fault-rate", type=float, default=0.1)
    parser.add_argument("--real-engine", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    engine = FakeEngine()
    if args.real_engine:
        from bot.diagnose import Engine
        from bot.settings import Settings

        engine = Engine.from_settings(Settings())
    with FakeSlackAPI() as fake:
        metrics = Metrics()
        app = create_app(test_settings(fake, listener_threads=8), store=MemoryStore(), engine=engine, metrics=metrics)
        servers = make_http_servers(app, metrics, "127.0.0.1", 0).start()
        port = HttpServers.port_of(servers.events)
        fake.fault_rate = args.fault_rate
        rss = [rss_mb()]
        sent: dict[str, float] = {}  # unique pid marker -> send time
        acks: list[float] = []
        command_acks: list[float] = []
        pool = ThreadPoolExecutor(64)

        def send(n: int) -> None:
            marker = f"(pid {100000 + n})"
            text = logs.HOST_OOM.replace("(pid 91822)", marker) + f"step {n} extra context line {n * 7}\n"
            sent[marker] = time.perf_counter()
            status, took = post(port, json.dumps(p.event_body(p.mention(text))).encode())
            acks.append(took if status == 200 else float("inf"))

        def side_load() -> None:
            fake.file_delay_s = 0  # slow downloads are made slow by size below, not by blocking the fake
            big = fake.add_file("big.log", (logs.NO_MATCH * ((50 << 20) // len(logs.NO_MATCH))).encode())
            files = [big] + [fake.add_file(f"slow{i}.log", (logs.SHM_BUS_ERROR * 20000).encode()) for i in range(8)]
            for i, url in enumerate(files):
                ev = p.event_body(p.mention("", files=[p.slack_file(f"f{i}.log", url)]))
                pool.submit(post, port, json.dumps(ev).encode())

        def commands() -> None:
            end = time.perf_counter() + args.seconds
            while time.perf_counter() < end:
                raw = p.slash_command("host RAM oom", response_url=fake.response_url()).encode()
                command_acks.append(post(port, raw, "application/x-www-form-urlencoded")[1])
                time.sleep(2)

        threading.Thread(target=commands, daemon=True).start()
        started = time.perf_counter()
        total = int(args.rate * args.seconds)
        for n in range(total):
            if n == total // 4:
                side_load()
            delay = started + n / args.rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            pool.submit(send, n)
            if n % int(args.rate * 5) == 0:
                rss.append(rss_mb())
        deadline = time.perf_counter() + 60
        while time.perf_counter() < deadline and len(_answer_calls(fake)) < total:
            time.sleep(1)
        rss.append(rss_mb())
        found = _answer_calls(fake)
        answers = {m: found.get(m, []) for m in sent}
        latencies = [calls[0].at - _mono(sent[m]) for m, calls in answers.items() if calls]
        good = [c for c in fake.calls if not c.args.get("_fault")]
        servers.stop()
    emit(
        {
            "events": total,
            "rate_per_s": args.rate,
            "slack_faults_injected": fake.faults,
            "lost": sum(1 for c in answers.values() if not c),
            "duplicates": sum(1 for c in answers.values() if len(c) > 1),
            "error_notices": sum("couldn't analyse" in str(c.args) for c in good),
            "busy_notices": sum("busy with other logs" in str(c.args) for c in good),
            "ack_p99_ms": pct([a for a in acks if a != float("inf")], 99),
            "ack_failures": sum(1 for a in acks if a == float("inf")),
            "answer_p95_ms": pct(latencies, 95),
            "command_ack_max_ms": round(max(command_acks, default=0) * 1000, 1),
            "rss_mb_start_end_max": [round(rss[0]), round(rss[-1]), round(max(rss))],
            "api_retries": {k: v for k, v in _retries(metrics).items()},
        },
        args.json,
    )


def _mono(perf: float) -> float:
    return perf - time.perf_counter() + time.monotonic()


def _answer_calls(fake: FakeSlackAPI) -> dict[str, list]:
    """Successful answer posts, by the event's unique pid marker (quoted in the evidence)."""
    out: dict[str, list] = {}
    for c in list(fake.calls):
        if c.method not in ("chat.update", "chat.postMessage") or c.args.get("_fault"):
            continue
        blocks = str(c.args.get("blocks"))
        if logs.OOM_ENTRY in blocks:
            for marker in set(re.findall(r"\(pid 1\d{5}\)", blocks)):
                out.setdefault(marker, []).append(c)
    return out


def _retries(metrics: Metrics) -> dict[str, float]:
    out = {}
    for metric in metrics.api_retries.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total"):
                out[sample.labels["reason"]] = sample.value
    return out


if __name__ == "__main__":
    main()
