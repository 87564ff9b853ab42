"""Load on `traindoc serve --http` (a separate process, the bundled knowledge base and model)
against the fake Slack Web API on loopback, with faults: events/s of distinct pasted logs, 10 % of
Web API calls answered 500 or 429; meanwhile 8 slow file downloads (a slow file host), one 50 MB
log, and slash commands whose ack time is measured.

Reports lost answers, duplicates, error notices, ack p99, answer p95, slash-command ack max and the
server's RSS over the run (from /proc). Targets (issue 12): 0 lost, 0 duplicates, 0 error notices,
ack p99 <= 300 ms, answer p95 <= 1.5 s, RSS flat, slash commands acked in < 1 s.

    python bench/load.py [--rate 20] [--seconds 60] [--fault-rate 0.1] [--index-dir DIR] [--json]

Without --index-dir the server uses the user's index (~/.cache/traindoc/index, built if missing).
"""
from __future__ import annotations

import argparse
import http.client
import json
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from prometheus_client.parser import text_string_to_metric_families

from bench.common import emit
from tests.fakes import logs
from tests.fakes import slack_payloads as p
from tests.fakes.serve_process import serve_http
from tests.fakes.slack_api import FakeSlackAPI, signed_headers

SLOW_DOWNLOAD_S = 20.0  # each of the 8 slow files takes this long to arrive


def pct(values: list[float], q: int) -> float:
    return round(statistics.quantiles(values, n=100)[q - 1] * 1000, 1) if len(values) > 1 else 0.0


def post(port: int, raw: bytes, content_type: str = "application/json") -> tuple[int, float]:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/slack/events", raw, signed_headers(raw, content_type=content_type))
    status = conn.getresponse().status
    conn.close()
    return status, time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--fault-rate", type=float, default=0.1)
    parser.add_argument("--index-dir", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    index = {"TRAINDOC_INDEX_DIR": args.index_dir} if args.index_dir else {}
    with FakeSlackAPI() as fake, tempfile.TemporaryDirectory() as tmp:
        metrics_port = free_port()
        env = {**index, "TRAINDOC_METRICS_PORT": str(metrics_port)}
        with serve_http(fake, Path(tmp) / "traindoc.db", extra_env=env) as server:
            result = run_load(fake, server.proc, server.port, metrics_port, args)
    emit(result, args.json)


def run_load(fake: FakeSlackAPI, server: subprocess.Popen[str], port: int, metrics_port: int, args: argparse.Namespace) -> dict:
    warm = post(port, json.dumps(p.event_body(p.mention(logs.HOST_OOM))).encode())  # first event: auth.test, warm-up
    fake.wait_calls("chat.update", timeout=60)
    fake.reset()
    fake.fault_rate = args.fault_rate
    rss = [rss_mb(server.pid)]
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
        big = fake.add_file("big.log", (logs.NO_MATCH * ((50 << 20) // len(logs.NO_MATCH))).encode())
        slow = [
            fake.add_file(f"slow{i}.log", (logs.SHM_BUS_ERROR * 200).encode(), delay_s=SLOW_DOWNLOAD_S)
            for i in range(8)
        ]
        for i, url in enumerate([big, *slow]):
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
            rss.append(rss_mb(server.pid))
    deadline = time.perf_counter() + 60
    while time.perf_counter() < deadline and len(_answer_calls(fake)) < total:
        time.sleep(1)
    rss.append(rss_mb(server.pid))
    pool.shutdown(wait=True)
    found = _answer_calls(fake)
    answers = {m: found.get(m, []) for m in sent}
    latencies = [calls[0].at - _mono(sent[m]) for m, calls in answers.items() if calls]
    good = [c for c in fake.calls if not c.args.get("_fault")]
    return {
        "events": total,
        "rate_per_s": args.rate,
        "warmup_status": warm[0],
        "slack_faults_injected": fake.faults,
        "lost": sum(1 for c in answers.values() if not c),
        "duplicates": sum(1 for c in answers.values() if len(c) > 1),
        "error_notices": sum("couldn't analyse" in str(c.args) for c in good),
        "busy_notices": sum("busy with other logs" in str(c.args) for c in good),
        "ack_p99_ms": pct([a for a in acks if a != float("inf")], 99),
        "ack_failures": sum(1 for a in acks if a == float("inf")),
        "answer_p50_ms": pct(latencies, 50),
        "answer_p95_ms": pct(latencies, 95),
        "command_ack_max_ms": round(max(command_acks, default=0) * 1000, 1),
        "command_acks": len(command_acks),
        "server_rss_mb_start_end_max": [round(rss[0]), round(rss[-1]), round(max(rss))],
        "api_retries": _retries(metrics_port),
    }


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


def _retries(metrics_port: int) -> dict[str, float]:
    """The server's own count of retried Web API calls, by reason (its /metrics)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    return {
        sample.labels["reason"]: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "traindoc_slack_api_retries_total"
    }


if __name__ == "__main__":
    main()
