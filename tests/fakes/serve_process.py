"""`traindoc serve --http` as a child process against a fake Slack Web API (the e2e test, bench/load.py)."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.fakes.slack_api import BOT_TOKEN, SIGNING_SECRET, FakeSlackAPI

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class ServeProcess:
    proc: subprocess.Popen[str]
    url: str  # http://127.0.0.1:<port>/slack/events

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/", 1)[0])


@contextmanager
def serve_http(
    fake: FakeSlackAPI, database: Path, *, extra_env: Mapping[str, str] = {}, startup_s: float = 300.0
) -> Iterator[ServeProcess]:
    """Start the server, wait until it listens, stop it on exit (terminate, then kill)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "TRAINDOC_SLACK_API_URL": fake.base_url,
        "TRAINDOC_DATABASE_URL": f"sqlite:///{database}",
        "TRAINDOC_METRICS_PORT": "0",  # any free port: tests run side by side
        **extra_env,
    }
    env.pop("SLACK_APP_TOKEN", None)
    cmd = [sys.executable, "-m", "bot.cli", "serve", "--http", "--host", "127.0.0.1", "--port", "0"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        yield ServeProcess(proc, _wait_for_listening(lines, proc, startup_s))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(timeout=10)
        proc.stdout.close()  # type: ignore[union-attr]


def _wait_for_listening(lines: queue.Queue[str], proc: subprocess.Popen[str], startup_s: float) -> str:
    deadline = time.monotonic() + startup_s
    seen: list[str] = []
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            if proc.poll() is not None:
                break
            continue
        seen.append(line)
        if "listening on " in line:
            return line.split("listening on ", 1)[1].split()[0]
    raise AssertionError("traindoc serve --http did not start:\n" + "".join(seen[-30:]))
