"""Turn raw input (bytes or text from Slack, files or stdin) into a clean, redacted Report.

Normalizes what chat and terminals do to logs: Slack HTML escapes, <@U123> mentions, <url|label>
links, code fences, ANSI colour codes, CRLF, NUL and other control bytes, invalid UTF-8.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Literal

import re2

from bot.bounded import read_bounded
from bot.model import LogFile, Report
from bot.redact import redact
from kb.errors import IngestError

# a 50 MB log fits; anything larger keeps its head and tail (bot.bounded)
MAX_INPUT_BYTES = 64 << 20
SIGNAL_WINDOW = 1 << 18  # looks_like_log reads at most this much of a huge input
MAX_LINE_CHARS = 4000  # one 10 MB line is clipped, not scanned forever or rendered


_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SLACK_MENTION = re.compile(r"<[@#!][A-Z0-9^|a-z_-]+(?:\|[^>]*)?>")
_SLACK_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")
_FENCE = re.compile(r"^\s*```[\w-]*\s*$|```", re.MULTILINE)
# What makes text a log rather than prose. Questions rarely hold a clock time, an uppercase log
# level, a progress bar, a metrics dict or an HTTP status line; logs of healthy runs hold little
# else (vLLM "INFO 12-01 13:40:02", uvicorn access lines, Megatron "| lm loss: 3.41 |", tqdm), or
# an argument parser's "usage: train.py [-h] ..." / "train.py: error: ..." refusal.
_LOG_SIGNAL = re2.compile(
    r"(?m)Traceback \(most recent call last\)|^\s*File \"[^\"\n]*\", line \d+|"
    r"\b[A-Z]\w*(?:Error|Exception)\b:|\.py:\d+: [A-Z]\w*Warning: |"
    r"NCCL (?:WARN|INFO)|^\[?rank\d+\]?:|^usage: \S+ |^[\w.-]+: error: |"
    r"\b[EWIF]\d{4} \d\d:\d\d:\d\d\.\d+|\bNVRM: Xid\b|"
    r"^\s*\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\b\d\d:\d\d:\d\d\b|"
    r"\b(?:ERROR|WARNING|CRITICAL|FATAL)\b|"
    r"(?:^|[\[\s|(])(?:INFO|DEBUG|TRACE|NOTICE|WARN)(?:[\]:\s|)]|$)|"
    r"CUDA error|Segmentation fault|Killed\b|core dumped|^\s*frame #\d+: |"
    r"\d%\|| \d+/\d+ \[\d|[\d.]+ ?(?:it/s|s/it)\b|\{['\"]\w+['\"]: |HTTP/\d(?:\.\d)?\"? \d{3}\b|"
    r" \| [\w .()/-]+: +-?[\d.]|NVIDIA-SMI \d|\d+MiB +\||\[[WEI] [\w.-]+:\d+\]"
)


def decode(data: bytes, *, name: str = "the input", max_bytes: int = MAX_INPUT_BYTES) -> str:
    """Bytes to text: gunzip if gzipped, keep head and tail if too large, reject binary."""
    return read_text([data], name=name, max_bytes=max_bytes)


def read_text(
    chunks: Iterable[bytes], *, name: str = "the input", max_bytes: int = MAX_INPUT_BYTES
) -> str:
    """A stream of chunks (file, stdin, download) as text, cut by the one policy of bot.bounded:
    gzip inflated as a stream, head and tail kept, a line saying what was skipped."""
    kept = read_bounded(chunks, max_bytes)
    text = _decode_bytes(kept.head)
    if kept.skipped_bytes:
        text += (
            f"\n[traindoc skipped {kept.skipped_bytes:,} bytes ({kept.skipped_lines:,} lines) in "
            "the middle of "
            f"{name}: kept its first {len(kept.head):,} bytes (versions, config) and its "
            f"last {len(kept.tail):,} (the failure)]\n"
        )
        text += _decode_bytes(kept.tail, check=False)
    for note in kept.notes:
        text += f"\n[traindoc: {name}: {note}]"
    return text


def _decode_bytes(data: bytes, *, check: bool = True) -> str:
    sample = data[:65536]
    if sample:
        # UTF-16 logs are mostly NUL bytes in alternate positions: decode instead of rejecting.
        if sample[:2] in (b"\xff\xfe", b"\xfe\xff"):
            return data.decode("utf-16", "replace")
        if check:
            nul_share = sample.count(0) / len(sample)
            control = sum(1 for b in sample if b < 9 or 13 < b < 32) / len(sample)
            decoded = sample.decode("utf-8", "replace")
            invalid = decoded.count("\ufffd") / max(1, len(decoded))
            if nul_share > 0.01 or control > 0.10 or invalid > 0.10:
                raise IngestError(
                    "input looks binary, not a text log (paste the text, or attach a .log/.txt/.gz)"
                )
    return data.decode("utf-8", "replace")


def clip_long_lines(text: str, limit: int = MAX_LINE_CHARS) -> str:
    if len(text) <= limit or all(len(line) <= limit for line in text.split("\n")):
        return text
    return "\n".join(
        line if len(line) <= limit else line[:limit] + f" …[{len(line) - limit} chars clipped]"
        for line in text.split("\n")
    )


def normalize(text: str, *, slack: bool = False) -> str:
    """Clean text for matching and display (never changes what a log line says)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ANSI.sub("", text)
    text = _CONTROL.sub("", text)
    if slack:
        text = _SLACK_MENTION.sub("", text)
        text = _SLACK_LINK.sub(lambda m: m.group(2) or m.group(1), text)
        text = _FENCE.sub("", text)
        # Slack escapes only these three; &amp; last so "&amp;lt;" stays "&lt;".
        text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    text = clip_long_lines(text)
    return redact(text)


def looks_like_log(text: str) -> bool:
    """A question is a few lines of prose; a log has error lines, tracebacks or log prefixes."""
    if len(text) > SIGNAL_WINDOW:  # a question is never this long: its head and tail decide, fast
        text = text[: SIGNAL_WINDOW // 2] + "\n" + text[-SIGNAL_WINDOW // 2 :]
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return False
    signals = sum(1 for _ in itertools.islice(_LOG_SIGNAL.finditer(text), 2))
    return signals >= 1 and (len(lines) >= 2 or signals >= 2 or len(text) > 200)


def build_report(files: Sequence[LogFile], *, origin: str = "cli", question: str = "") -> Report:
    """A Report from already-normalized texts; raises IngestError when there is nothing to read."""
    files = tuple(f for f in files if f.text.strip())
    if not files and not question.strip():
        raise IngestError(
            "empty input: paste a log or traceback, attach a log file, or ask a question"
        )
    if not files:
        return Report(
            files=(LogFile(name="<question>", text=question),), kind="question", origin=origin
        )
    kind: Literal["log", "question"] = (
        "log" if len(files) > 1 or looks_like_log(files[0].text) else "question"
    )
    return Report(files=files, kind=kind, origin=origin, question=question)


def report_from_text(
    text: str, *, origin: str = "cli", slack: bool = False, name: str = "<input>"
) -> Report:
    return build_report([LogFile(name=name, text=normalize(text, slack=slack))], origin=origin)


def report_from_bytes(named: Sequence[tuple[str, bytes]], *, origin: str = "cli") -> Report:
    return report_from_streams([(name, [data]) for name, data in named], origin=origin)


def report_from_streams(
    named: Sequence[tuple[str, Iterable[bytes]]], *, origin: str = "cli"
) -> Report:
    """Files or stdin read as chunk streams: each decoded within the byte budget, then
    normalized."""
    files = [
        LogFile(name=name, text=normalize(read_text(chunks, name=name))) for name, chunks in named
    ]
    return build_report(files, origin=origin)
