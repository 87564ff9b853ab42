"""File downloads: the token goes only to Slack's file origin, redirects off it are refused, login
pages recognised, content cut by ingest's head-and-tail policy and gzip inflated as a stream."""

from __future__ import annotations

import gzip

import pytest

from bot.slack.files import FileDownloadError, FileOrigins, download_text, file_url, looks_like_login_page
from tests.fakes.attacker import AttackerServer
from tests.fakes.slack_api import BOT_TOKEN, FakeSlackAPI


@pytest.fixture(scope="module")
def fake():
    with FakeSlackAPI() as fake:
        yield fake


@pytest.fixture
def attacker():
    with AttackerServer() as server:
        yield server


def _get(fake: FakeSlackAPI, url: str, *, token: str = BOT_TOKEN, max_bytes: int = 1000) -> str:
    origins = FileOrigins.for_slack(api_url=fake.base_url)
    return download_text(url, name="f.log", token=token, max_bytes=max_bytes, origins=origins)


def test_download_with_bot_token(fake):
    url = fake.add_file("a.log", b"line 1\nline 2\n")
    assert _get(fake, url) == "line 1\nline 2\n"
    assert fake.calls_to("file")[-1].headers["authorization"] == f"Bearer {BOT_TOKEN}"


def test_wrong_token_gets_login_page_and_a_clear_error(fake):
    url = fake.add_file("b.log", b"secret log")
    with pytest.raises(FileDownloadError, match="login page.*files:read"):
        _get(fake, url, token="xoxb-wrong")


def test_oversized_file_keeps_head_and_tail(fake):
    lines = b"".join(b"line %06d\n" % i for i in range(30_000))  # 360 kB
    url = fake.add_file("big.log", lines)
    text = _get(fake, url, max_bytes=100_000)
    assert text.startswith("line 000000\n") and text.endswith("line 029999\n")
    assert "skipped" in text and "in the middle of f.log" in text
    assert len(text) < 101_000


def test_gzip_attachment_is_inflated_as_a_stream(fake):
    url = fake.add_file("c.log.gz", gzip.compress(b"NCCL WARN hello\n"), content_type="application/gzip")
    assert _get(fake, url) == "NCCL WARN hello\n"


def test_http_errors_and_missing_urls(fake):
    with pytest.raises(FileDownloadError, match="404"):
        _get(fake, fake.root + "files-pri/T/nope.log")
    with pytest.raises(FileDownloadError, match="no download URL"):
        file_url({"name": "external.log"})


def test_external_files_are_refused():
    with pytest.raises(FileDownloadError, match="external file"):
        file_url({"name": "gdrive.log", "is_external": True, "url_private": "https://docs.example.com/x"})


def test_token_never_goes_to_another_origin(fake, attacker):
    with pytest.raises(FileDownloadError, match="only downloads files from Slack"):
        _get(fake, attacker.root + "files-pri/T-F1/x.log")
    assert attacker.requests == []  # not even a connection without the token


def test_redirect_off_origin_is_refused(fake, attacker):
    url = fake.add_redirect("moved.log", attacker.root + "stolen.log")
    with pytest.raises(FileDownloadError, match="only downloads files from Slack"):
        _get(fake, url)
    assert attacker.requests == [] and not attacker.saw_token()


def test_redirect_on_origin_is_followed(fake):
    target = fake.add_file("real.log", b"RuntimeError: boom\n")
    url = fake.add_redirect("alias.log", target)
    assert _get(fake, url) == "RuntimeError: boom\n"


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://files.slack.com/x.log",
        "http://files.slack.com/files-pri/T-F1/x.log",  # right host, plain http
        "https://files.slack.com.evil.example/x.log",
        "https://evil.example/files.slack.com/x.log",
        "https://files.slack.com:8443/x.log",
        "https://user@evil.example/x.log",
        "data:text/plain,hello",
    ],
)
def test_production_origins_refuse_other_schemes_hosts_and_ports(url):
    origins = FileOrigins.for_slack(workspace_url="https://acme.slack.com/")
    assert not origins.permits(url)
    with pytest.raises(FileDownloadError, match="only downloads files from Slack"):
        download_text(url, name="x", token=BOT_TOKEN, max_bytes=10, origins=origins)


def test_production_origins_allow_slack_file_hosts():
    origins = FileOrigins.for_slack(workspace_url="https://acme.slack.com/")
    assert origins.permits("https://files.slack.com/files-pri/T1-F1/a.log")
    assert origins.permits("https://FILES.slack.com:443/files-pri/T1-F1/a.log")
    assert origins.permits("https://acme.slack.com/files-pri/T1-F1/a.log")
    assert not origins.permits("https://other.slack.com/files-pri/T1-F1/a.log")
    # a workspace URL that is not Slack's does not widen the set
    assert not FileOrigins.for_slack(workspace_url="https://evil.example/").permits("https://evil.example/a")


def test_configured_api_origin_is_exact(fake):
    origins = FileOrigins.for_slack(api_url=fake.base_url)
    assert origins.permits(fake.root + "files-pri/x")
    assert not origins.permits(fake.root.replace("127.0.0.1", "localhost") + "files-pri/x")
    assert not origins.permits(fake.root.replace(f":{fake.port}", f":{fake.port + 1}") + "files-pri/x")
    assert not origins.permits(fake.root.replace("http:", "https:") + "files-pri/x")
    assert not origins.permits("https://files.slack.com/files-pri/x")


def test_login_page_detection():
    assert looks_like_login_page("text/html; charset=utf-8", b"")
    assert looks_like_login_page("application/octet-stream", b"  <!DOCTYPE html><html>")
    assert not looks_like_login_page("text/plain", b"Traceback")
