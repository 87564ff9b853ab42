"""A threaded fake of the Slack Web API on 127.0.0.1:0, for tests that run the real app over HTTP.

Records every call (method, headers, arguments from JSON, form or query bodies), answers the methods
traindoc uses with plausible payloads, serves `url_private` files only to the bot token (an HTML
login page otherwise, as Slack does), accepts `response_url` posts, and can script one-off answers
such as a 429 with Retry-After. `wait_for` polls with a deadline; tests never sleep.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

from tests.fakes import pools
from tests.fakes.loopback import LoopbackServer

T = TypeVar("T")

BOT_TOKEN = "xoxb-1-fake-bot-token"
APP_TOKEN = "xapp-1-fake-app-token"
SIGNING_SECRET = "fake-signing-secret"
TEAM_ID = "T0TEST"
BOT_USER_ID = "UBOT"
LOGIN_PAGE = b"<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>"


@dataclass(frozen=True)
class Call:
    method: str  # Web API method, "response_url" or "file"
    path: str
    headers: dict[str, str]
    args: dict[str, Any]
    at: float = field(default_factory=time.monotonic)


@dataclass
class Scripted:
    status: int
    body: dict[str, Any] | bytes
    headers: dict[str, str]
    times: int


@dataclass
class FakeFile:
    content: bytes
    content_type: str
    html: bool = False  # answer the login page even with the right token (a broken file URL)
    redirect: str | None = None  # answer 302 to this Location instead (to test redirect handling)
    delay_s: float = 0.0  # a slow file host for this file only (load tests)


class FakeSlackAPI(LoopbackServer):
    def __init__(self, *, bot_token: str = BOT_TOKEN, app_token: str = APP_TOKEN):
        super().__init__()
        self.bot_token = bot_token
        self.app_token = app_token
        self.calls: list[Call] = []
        self.threads: dict[tuple[str, str], list[dict[str, Any]]] = {}  # conversations.replies
        self.files: dict[str, FakeFile] = {}
        self.socket_url = ""  # what apps.connections.open returns
        self._scripted: dict[str, list[Scripted]] = {}
        self._cond = threading.Condition()
        self._ts = itertools.count(1)
        self.fault_rate = 0.0  # share of Web API calls answered 500 or 429 (load tests)
        self.faults = 0
        self._rng = random.Random(12)
        self.file_delay_s = 0.0  # a slow file host (load tests)

    # -- lifecycle -------------------------------------------------------------------------------

    thread_name = "fake-slack"

    def stop(self) -> None:
        pools.drain()  # answers still in flight reach this fake, not a closed port
        super().stop()

    def _make_server(self) -> ThreadingHTTPServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                fake._handle(self, b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                fake._handle(self, self.rfile.read(length))

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        return server

    def _serve_args(self) -> tuple[Any, ...]:
        return (0.05,)

    @property
    def port(self) -> int:
        assert self._server is not None, "start() first"
        return self._server.server_address[1]

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def base_url(self) -> str:
        """For WebClient(base_url=...): the trailing slash matters."""
        return self.root + "api/"

    # -- test controls ---------------------------------------------------------------------------

    def script(
        self,
        method: str,
        *,
        status: int = 200,
        body: dict[str, Any] | bytes | None = None,
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next `times` calls of `method` this way instead of the default."""
        with self._cond:
            self._scripted.setdefault(method, []).append(
                Scripted(status, body if body is not None else {"ok": status == 200}, headers or {}, times)
            )

    def add_file(
        self, name: str, content: bytes, *, content_type: str = "text/plain", html: bool = False, delay_s: float = 0.0
    ) -> str:
        self.files[name] = FakeFile(content, content_type, html, delay_s=delay_s)
        return f"{self.root}files-pri/{TEAM_ID}-F{len(self.files)}/{name}"

    def add_redirect(self, name: str, location: str) -> str:
        """A file URL on this fake that answers 302 Found with `location`."""
        self.files[name] = FakeFile(b"", "text/plain", redirect=location)
        return f"{self.root}files-pri/{TEAM_ID}-F{len(self.files)}/{name}"

    def response_url(self, key: str = "1") -> str:
        return f"{self.root}response/{key}"

    def reset(self) -> None:
        with self._cond:
            self.calls.clear()
            self._scripted.clear()
            self.threads.clear()
            self.files.clear()

    def calls_to(self, method: str) -> list[Call]:
        with self._cond:
            return [c for c in self.calls if c.method == method]

    def wait_for(self, predicate: Callable[[], T], timeout: float = 10.0, what: str = "") -> T:
        """Poll `predicate` on every recorded call until it returns a truthy value or the deadline passes."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                value = predicate()
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    methods = [c.method for c in self.calls]
                    raise AssertionError(f"timed out waiting for {what or predicate}; calls so far: {methods}")
                self._cond.wait(min(left, 0.05))

    def wait_calls(self, method: str, count: int = 1, timeout: float = 10.0) -> list[Call]:
        return self.wait_for(
            lambda: (c := self.calls_to(method)) and len(c) >= count and c, timeout, f"{count}x {method}"
        )

    def assert_quiet(self, method: str, count: int, settle: Callable[[], bool] | None = None) -> None:
        """No more than `count` calls of `method` once `settle` holds (e.g. the app went idle)."""
        if settle is not None:
            self.wait_for(settle, what="settle")
        assert len(self.calls_to(method)) == count, [c.args for c in self.calls_to(method)]

    # -- request handling ------------------------------------------------------------------------

    def _handle(self, req: BaseHTTPRequestHandler, raw: bytes) -> None:
        url = urlsplit(req.path)
        headers = {k.lower(): v for k, v in req.headers.items()}
        if url.path.startswith("/files-pri/"):
            self._serve_file(req, url.path, headers)
            return
        args = _parse_args(raw, headers.get("content-type", ""), url.query)
        if url.path.startswith("/response/"):
            self._record(Call("response_url", url.path, headers, args))
            _send_json(req, 200, {"ok": True})
            return
        method = url.path.removeprefix("/api/")
        if self.fault_rate and method != "auth.test":
            with self._cond:
                fault = self._rng.random() < self.fault_rate
                self.faults += fault
            if fault:
                self._record(Call(method, url.path, headers, {**args, "_fault": True}))
                if self._rng.random() < 0.5:
                    _send_json(req, 500, {"ok": False, "error": "internal_error"})
                else:
                    _send_json(req, 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"})
                return
        with self._cond:
            scripted = self._scripted.get(method)
            answer = None
            if scripted:
                answer = scripted[0]
                answer.times -= 1
                if answer.times <= 0:
                    scripted.pop(0)
        self._record(Call(method, url.path, headers, args))
        if answer is not None:
            if isinstance(answer.body, bytes):
                _send(req, answer.status, answer.body, "text/plain", answer.headers)
            else:
                _send_json(req, answer.status, answer.body, answer.headers)
            return
        token = headers.get("authorization", "").removeprefix("Bearer ") or args.get("token", "")
        expected = self.app_token if method == "apps.connections.open" else self.bot_token
        if token != expected:
            _send_json(req, 200, {"ok": False, "error": "invalid_auth"})
            return
        _send_json(req, 200, self._default_answer(method, args))

    def _record(self, call: Call) -> None:
        with self._cond:
            self.calls.append(call)
            self._cond.notify_all()

    def _default_answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {
                "ok": True,
                "user_id": BOT_USER_ID,
                "bot_id": "BBOT",
                "team_id": TEAM_ID,
                "user": "traindoc",
                "team": "Test",
                "url": "https://test.slack.com/",
            }
        if method in ("chat.postMessage", "chat.update"):
            ts = args.get("ts") or f"{1700000000 + next(self._ts)}.000100"
            return {"ok": True, "channel": args.get("channel", ""), "ts": ts, "message": {"text": args.get("text", "")}}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": f"{1700000000 + next(self._ts)}.000200"}
        if method == "conversations.replies":
            messages = self.threads.get((args.get("channel", ""), args.get("ts", "")), [])
            return {"ok": True, "messages": messages, "has_more": False}
        if method == "apps.connections.open":
            return {"ok": True, "url": self.socket_url}
        if method in ("views.open", "views.publish", "views.update"):
            return {
                "ok": True,
                "view": {"id": "V1", **(args.get("view") if isinstance(args.get("view"), dict) else {})},
            }
        return {"ok": True}

    def _serve_file(self, req: BaseHTTPRequestHandler, path: str, headers: dict[str, str]) -> None:
        name = path.rsplit("/", 1)[-1]
        self._record(Call("file", path, headers, {"name": name}))
        found = self.files.get(name)
        if delay := max(self.file_delay_s, found.delay_s if found else 0.0):
            time.sleep(delay)
        authorized = headers.get("authorization") == f"Bearer {self.bot_token}"
        if found is None:
            _send(req, 404, b"not found", "text/plain")
        elif found.redirect is not None:
            _send(req, 302, b"", "text/plain", {"Location": found.redirect})
        elif not authorized or found.html:
            _send(req, 200, LOGIN_PAGE, "text/html; charset=utf-8")
        else:
            _send(req, 200, found.content, found.content_type)


def _parse_args(raw: bytes, content_type: str, query: str) -> dict[str, Any]:
    args: dict[str, Any] = dict(parse_qsl(query))
    if not raw:
        return args
    if "json" in content_type:
        args.update(json.loads(raw))
    else:
        form = dict(parse_qsl(raw.decode("utf-8")))
        for key, value in form.items():
            # slack_sdk form-encodes blocks/attachments/view as JSON strings
            if key in ("blocks", "attachments", "view") and value[:1] in "[{":
                form[key] = json.loads(value)
        args.update(form)
    return args


def _send(
    req: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
) -> None:
    req.send_response(status)
    req.send_header("Content-Type", content_type)
    req.send_header("Content-Length", str(len(body)))
    for key, value in (headers or {}).items():
        req.send_header(key, value)
    req.end_headers()
    req.wfile.write(body)


def _send_json(
    req: BaseHTTPRequestHandler, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    _send(req, status, json.dumps(payload).encode(), "application/json; charset=utf-8", headers)


# -- signed requests as Slack sends them ------------------------------------------------------


def signed_headers(
    body: str | bytes,
    *,
    secret: str = SIGNING_SECRET,
    timestamp: int | None = None,
    content_type: str = "application/json",
    retry_num: int | None = None,
) -> dict[str, str]:
    raw = body.encode() if isinstance(body, str) else body
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:".encode() + raw, hashlib.sha256).hexdigest()
    headers = {"Content-Type": content_type, "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}
    if retry_num is not None:
        headers["X-Slack-Retry-Num"] = str(retry_num)
        headers["X-Slack-Retry-Reason"] = "http_timeout"
    return headers
