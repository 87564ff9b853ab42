"""`traindoc serve --http` as a process, against the recording fake Web API: one signed mention, one threaded reply."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from tests.fakes import logs
from tests.fakes import slack_payloads as p
from tests.fakes.engine import FakeEngine
from tests.fakes.slack_api import BOT_TOKEN, SIGNING_SECRET, FakeSlackAPI, signed_headers

# The first e2e test builds the session index (minutes on a busy 2-core machine).
pytestmark = pytest.mark.timeout(900)

STARTUP_DEADLINE_S = 180  # loads the model and the (already built) index


def test_traindoc_serve_http_answers_a_signed_mention(engine, tmp_path):
    if isinstance(engine, FakeEngine):
        pytest.skip("needs the real engine (TRAINDOC_TEST_FAKE_ENGINE is set)")
    with FakeSlackAPI() as fake:
        env = {
            **os.environ,
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "TRAINDOC_SLACK_API_URL": fake.base_url,
            "TRAINDOC_INDEX_DIR": str(engine.index_dir),  # the session's index: no rebuild
            "TRAINDOC_DATABASE_URL": f"sqlite:///{tmp_path / 'traindoc.db'}",
            "TRAINDOC_METRICS_PORT": "0",  # any free port: tests run side by side
        }
        env.pop("SLACK_APP_TOKEN", None)
        cmd = [sys.executable, "-m", "bot.cli", "serve", "--http", "--host", "127.0.0.1", "--port", "0"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)  # type: ignore[union-attr]
        reader.start()
        try:
            url = _wait_for_listening(lines, proc)
            event = p.mention(logs.SHM_BUS_ERROR)
            raw = json.dumps(p.event_body(event))
            started = time.monotonic()
            request = urllib.request.Request(url, data=raw.encode(), headers=signed_headers(raw), method="POST")
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.status == 200
            update = fake.wait_calls("chat.update", timeout=60)[0]
            print(f"\nserve --http: event -> answer {1000 * (time.monotonic() - started):.0f} ms")
            posts = fake.calls_to("chat.postMessage")
            assert len(posts) == 1 and posts[0].args["thread_ts"] == event["ts"]
            assert f"`{logs.SHM_ENTRY}`" in json.dumps(update.args["blocks"])
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            reader.join(timeout=10)
            proc.stdout.close()  # type: ignore[union-attr]


def _wait_for_listening(lines: queue.Queue[str], proc: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + STARTUP_DEADLINE_S
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
