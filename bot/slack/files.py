"""Download Slack-hosted files (url_private) with the bot token, only from Slack's own file hosts.

The bot token is a workspace credential: it is sent only over https to `files.slack.com` or the
workspace's own host (in tests, to exactly the configured Web API origin: scheme, host and port).
Any other URL (an external/remote file, another host, `http://`, `file://`) is refused before any
connection is made, and redirects are followed by hand, each hop checked the same way: a redirect
off those origins is refused, never followed, so the token cannot leak through a 302.

Without a valid token (or without files:read) Slack answers 200 with an HTML login page, so the
content type and the first bytes are checked. The body is streamed into ingest's bounded reader:
memory stays bounded whatever the upload's size, and a gzip bomb stops at the cap.
"""

from __future__ import annotations

import http.client
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from bot.ingest import read_text
from bot.redact import redact
from kb.errors import FileDownloadError, IngestError

TIMEOUT_S = 20.0  # per socket operation
DEADLINE_S = 120.0  # for the whole download: a trickling server cannot hold a worker for ever
CHUNK = 1 << 16
MAX_REDIRECTS = 5
SLACK_FILE_HOST = "files.slack.com"


Origin = tuple[str, str, int]  # (scheme, host, port)


def _origin(url: str) -> Origin | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # a malformed port or host
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if not scheme or not host:
        return None
    return scheme, host, port or {"https": 443, "http": 80}.get(scheme, 0)


@dataclass(frozen=True)
class FileOrigins:
    """Where the bot token may be sent to fetch a file."""

    allowed: frozenset[Origin]

    @classmethod
    def for_slack(
        cls, *, api_url: str | None = None, workspace_url: str | None = None
    ) -> FileOrigins:
        """Slack's file hosts over https; with another Web API base URL (tests, a proxy),
        exactly its origin."""
        if api_url:
            origin = _origin(api_url)
            if origin is None:
                raise ValueError(f"not a URL: {api_url!r}")
            return cls(frozenset({origin}))
        hosts = {SLACK_FILE_HOST}
        workspace = _origin(workspace_url) if workspace_url else None
        if workspace and workspace[0] == "https" and workspace[1].endswith(".slack.com"):
            hosts.add(workspace[1])
        return cls(frozenset(("https", h, 443) for h in hosts))

    def permits(self, url: str) -> bool:
        origin = _origin(url)
        return origin is not None and origin in self.allowed


def file_url(f: Mapping[str, Any]) -> str:
    if f.get("is_external") or f.get("mode") == "external":
        raise FileDownloadError(
            f"{_name(f)} is an external file (hosted outside Slack): traindoc does not fetch it. "
            "Paste the log text instead."
        )
    url = f.get("url_private_download") or f.get("url_private")
    if not url:
        raise FileDownloadError(f"{_name(f)} has no download URL (is it an external file?)")
    return str(url)


def _name(f: Mapping[str, Any]) -> str:
    return str(f.get("name") or f.get("title") or "the file")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Surface 3xx as HTTPError so each hop is checked before the token is sent again."""

    def redirect_request(
        self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> None:
        return None


# Only http(s) handlers: no file://, ftp:// or data: handler exists to be reached, whatever the URL.
_OPENER = urllib.request.OpenerDirector()
for _handler in (
    urllib.request.ProxyHandler(),
    urllib.request.HTTPHandler(),
    urllib.request.HTTPSHandler(),
    _NoRedirect(),
    urllib.request.HTTPDefaultErrorHandler(),
    urllib.request.HTTPErrorProcessor(),
):
    _OPENER.add_handler(_handler)


def download_text(
    url: str,
    *,
    name: str,
    token: str,
    max_bytes: int,
    origins: FileOrigins,
    timeout: float = TIMEOUT_S,
    deadline_s: float = DEADLINE_S,
) -> str:
    """The file as text: gzip inflated as a stream, cut by ingest's one head-and-tail policy.
    Refuses URLs off `origins` before connecting."""
    chunks = stream(url, token=token, origins=origins, timeout=timeout, deadline_s=deadline_s)
    try:
        return read_text(chunks, name=name, max_bytes=max_bytes)
    except IngestError as exc:
        raise FileDownloadError(f"{name}: {exc}") from None


def stream(
    url: str,
    *,
    token: str,
    origins: FileOrigins,
    timeout: float = TIMEOUT_S,
    deadline_s: float = DEADLINE_S,
) -> Iterable[bytes]:
    """Yield the body in chunks; the first chunk is checked for Slack's login page."""
    started = time.monotonic()
    for _hop in range(MAX_REDIRECTS + 1):
        if not origins.permits(url):
            raise FileDownloadError(_refusal(url))
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
        try:
            response = _OPENER.open(request, timeout=timeout)
        except urllib.error.HTTPError as exc:
            exc.close()
            if exc.code in (301, 302, 303, 307, 308) and exc.headers.get("Location"):
                url = urljoin(url, exc.headers["Location"])
                continue
            raise FileDownloadError(f"Slack answered HTTP {exc.code} for the file") from None
        except (
            urllib.error.URLError,
            TimeoutError,
            OSError,
            http.client.HTTPException,
            ValueError,
        ) as exc:
            raise FileDownloadError(f"could not download the file: {redact(str(exc))}") from None
        return _body(response, started, deadline_s)
    raise FileDownloadError("the file URL redirected too many times")


def _body(response: Any, started: float, deadline_s: float) -> Iterable[bytes]:
    with response:
        content_type = response.headers.get("Content-Type", "")
        first = True
        while True:
            if time.monotonic() - started > deadline_s:
                raise FileDownloadError(
                    f"the download took longer than {deadline_s:.0f} s; paste the log's end instead"
                )
            try:
                chunk = response.read(CHUNK)
            except (TimeoutError, OSError, http.client.HTTPException) as exc:
                raise FileDownloadError(
                    f"could not download the file: {redact(str(exc))}"
                ) from None
            if first and looks_like_login_page(content_type, chunk):
                raise FileDownloadError(
                    "Slack sent a login page instead of the file: the app needs the files:read "
                    "scope and "
                    "the file must be shared where traindoc can see it. Paste the log text instead."
                )
            first = False
            if not chunk:
                return
            yield chunk


def _refusal(url: str) -> str:
    origin = _origin(url)
    where = f"{origin[0]}://{origin[1]}" if origin else "an unreadable URL"
    return (
        f"traindoc only downloads files from Slack's own file host over https, not from {where}. "
        "Paste the log text, or upload the file to Slack."
    )


def looks_like_login_page(content_type: str, data: bytes) -> bool:
    head = data[:512].lstrip().lower()
    return "text/html" in content_type.lower() or head.startswith((b"<!doctype html", b"<html"))
