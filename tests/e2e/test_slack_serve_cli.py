"""`traindoc serve --http` as a process, against the recording fake Web API: one signed mention, one threaded reply."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from tests.fakes import logs
from tests.fakes import slack_payloads as p
from tests.fakes.engine import FakeEngine
from tests.fakes.serve_process import serve_http
from tests.fakes.slack_api import FakeSlackAPI, signed_headers

# The first e2e test builds the session index (minutes on a busy 2-core machine).
pytestmark = pytest.mark.timeout(900)

STARTUP_DEADLINE_S = 180  # loads the model and the (already built) index


def test_traindoc_serve_http_answers_a_signed_mention(engine, tmp_path):
    if isinstance(engine, FakeEngine):
        pytest.skip("needs the real engine (TRAINDOC_TEST_FAKE_ENGINE is set)")
    index = {"TRAINDOC_INDEX_DIR": str(engine.index_dir)}  # the session's index: no rebuild
    with (
        FakeSlackAPI() as fake,
        serve_http(fake, tmp_path / "traindoc.db", extra_env=index, startup_s=STARTUP_DEADLINE_S) as server,
    ):
        event = p.mention(logs.SHM_BUS_ERROR)
        raw = json.dumps(p.event_body(event))
        started = time.monotonic()
        request = urllib.request.Request(server.url, data=raw.encode(), headers=signed_headers(raw), method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
        update = fake.wait_calls("chat.update", timeout=60)[0]
        print(f"\nserve --http: event -> answer {1000 * (time.monotonic() - started):.0f} ms")
        posts = fake.calls_to("chat.postMessage")
        assert len(posts) == 1 and posts[0].args["thread_ts"] == event["ts"]
        assert f"`{logs.SHM_ENTRY}`" in json.dumps(update.args["blocks"])
