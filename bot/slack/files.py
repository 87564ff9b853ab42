"""Download Slack-hosted files (url_private) with the bot token, safely.

Without a valid token (or without files:read) Slack answers 200 with an HTML login page, so the
content type and the first bytes are checked; reads are capped so a huge upload cannot exhaust memory.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from bot.redact import redact

TIMEOUT_S = 20.0
CHUNK = 1 << 16


class FileDownloadError(Exception):
    """A file could not be fetched as text; the message is safe to show in Slack."""


def file_url(f: Mapping[str, Any]) -> str:
    url = f.get("url_private_download") or f.get("url_private")
    if not url:
        raise FileDownloadError(f"{f.get('name', 'the file')} has no download URL (is it an external file?)")
    return str(url)


def download(url: str, *, token: str, max_bytes: int, timeout: float = TIMEOUT_S) -> tuple[bytes, bool]:
    """The file's first `max_bytes` bytes and whether it was cut there."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            content_type = response.headers.get("Content-Type", "")
            chunks, size = [], 0
            while size <= max_bytes:
                chunk = response.read(min(CHUNK, max_bytes + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except urllib.error.HTTPError as exc:
        raise FileDownloadError(f"Slack answered HTTP {exc.code} for the file") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise FileDownloadError(f"could not download the file: {redact(str(exc))}") from None
    data = b"".join(chunks)
    if looks_like_login_page(content_type, data):
        raise FileDownloadError(
            "Slack sent a login page instead of the file: the app needs the files:read scope and "
            "the file must be shared where traindoc can see it. Paste the log text instead."
        )
    return data[:max_bytes], len(data) > max_bytes


def looks_like_login_page(content_type: str, data: bytes) -> bool:
    head = data[:512].lstrip().lower()
    return "text/html" in content_type.lower() or head.startswith((b"<!doctype html", b"<html"))
