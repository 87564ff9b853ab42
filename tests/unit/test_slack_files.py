"""File downloads: bot token sent, login pages recognised, bytes capped."""

from __future__ import annotations

import pytest

from bot.slack.files import FileDownloadError, download, file_url, looks_like_login_page
from tests.fakes.slack_api import BOT_TOKEN, FakeSlackAPI


@pytest.fixture(scope="module")
def fake():
    with FakeSlackAPI() as fake:
        yield fake


def test_download_with_bot_token(fake):
    url = fake.add_file("a.log", b"line 1\nline 2\n")
    assert download(url, token=BOT_TOKEN, max_bytes=1000) == (b"line 1\nline 2\n", False)
    assert fake.calls_to("file")[-1].headers["authorization"] == f"Bearer {BOT_TOKEN}"


def test_wrong_token_gets_login_page_and_a_clear_error(fake):
    url = fake.add_file("b.log", b"secret log")
    with pytest.raises(FileDownloadError, match="login page.*files:read"):
        download(url, token="xoxb-wrong", max_bytes=1000)


def test_bytes_are_capped(fake):
    url = fake.add_file("big.log", b"x" * 300_000)
    data, cut = download(url, token=BOT_TOKEN, max_bytes=100_000)
    assert len(data) == 100_000 and cut


def test_http_errors_and_missing_urls(fake):
    with pytest.raises(FileDownloadError, match="404"):
        download(fake.root + "files-pri/T/nope.log", token=BOT_TOKEN, max_bytes=10)
    with pytest.raises(FileDownloadError, match="no download URL"):
        file_url({"name": "external.log"})


def test_login_page_detection():
    assert looks_like_login_page("text/html; charset=utf-8", b"")
    assert looks_like_login_page("application/octet-stream", b"  <!DOCTYPE html><html>")
    assert not looks_like_login_page("text/plain", b"Traceback")
