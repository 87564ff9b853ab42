"""Pick the lines of a log that say what went wrong, for the text retrievers.

A real log is mostly noise (step counters, INFO lines, progress bars); embedding its first 256
tokens says nothing. This keeps the error lines, the final exception and the library frames that
led to it, with launcher prefixes and volatile numbers removed, in their original order.
"""

from __future__ import annotations

import re

from index.prefixes import parse_line

MAX_EVIDENCE_CHARS = 1200

# "transport/net.cc:123 " after NCCL's head
_NCCL_SOURCE = re.compile(r"[\w/.-]{1,200}\.(?:cc|cu|h):\d{1,6} ")
_LEADER = re.compile(r"[-|] ")  # "2026-12-02 12:01:00,512 - ERROR - ..." keeps "ERROR - ..."

_ERROR_WORDS = re.compile(
    r"(?i)\b(?:error|exception|fail(?:ed|ure)?|fatal|abort(?:ed|ing)?|timed? ?out|timeout|killed|"
    r"segmentation fault|core dumped|out of memory|oom|xid|nan|inf\b|illegal|invalid|mismatch|"
    r"cannot|can't|unable|not found|no such|denied|refused|unhandled|corrupt|hang|stuck|deadlock|"
    r"unsupported|not supported|too (?:old|large|many|small)|exceed(?:s|ed)?|overflow|"
    r"warn(?:ing)?)\b"
)
_FINAL_EXCEPTION = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)\b:?"
)
_FRAME = re.compile(r'^\s*File "([^"]+)", line \d+, in (\S+)')
_NOISE = re.compile(r"(?i)^\s*(?:\d+%\|| *\||iter(?:ation)? \d+|step \d+|epoch \d+|loss[ =:])")
_VOLATILE = re.compile(r"0x[0-9a-fA-F]+|\b\d{5,}\b")


def strip_prefix(line: str) -> str:
    """The message of a log line without rank/launcher/timestamp prefixes (index.prefixes)."""
    parsed = parse_line(line)
    message = parsed.text
    if (parsed.device is not None and (m := _NCCL_SOURCE.match(message))) or (
        parsed.timestamp is not None and (m := _LEADER.match(message))
    ):
        message = message[m.end() :]
    return message.strip()


def clip_around(text: str, start: int, end: int, limit: int) -> str:
    """At most `limit` characters of `text` that always contain text[start:end] (or as much of it as
    fits): the head when the match lies in it, else a window around the match, marked with "…"."""
    if len(text) <= limit:
        return text
    if end <= limit - 1:
        return text[: limit - 1] + "…"
    span = end - start
    if span >= limit - 2:
        return "…" + text[start : start + limit - 2] + "…"
    before = (limit - 2 - span) // 3  # a little context before, more after
    lo = max(0, start - before)
    hi = min(len(text), lo + limit - 2)
    return ("…" if lo > 0 else "") + text[lo:hi] + ("…" if hi < len(text) else "")


def _frame_hint(path: str, func: str) -> str:
    # Keep the library-relative part: torch/distributed/checkpoint/state_dict_saver.py save
    for marker in ("site-packages/", "dist-packages/", "/lib/python"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{path.rsplit('.', 1)[0].strip('/').replace('/', '.')} {func}"


def evidence_text(
    text: str, *, hit_lines: frozenset[int] = frozenset(), limit: int = MAX_EVIDENCE_CHARS
) -> str:
    """The error-bearing lines of `text` (1-based `hit_lines` are always kept first),
    deduplicated."""
    lines = text.split("\n")
    if len(lines) <= 3 and len(text) <= limit:
        return " ".join(strip_prefix(line) for line in lines).strip()
    picked: list[tuple[int, int, str]] = []  # (priority, line index, text)
    seen: set[str] = set()

    def add(priority: int, index: int, message: str) -> None:
        key = _VOLATILE.sub("#", message).lower()
        if message and key not in seen:
            seen.add(key)
            picked.append((priority, index, message))

    last_exception = -1
    # A repeated line (a flood of one warning, a decompressed bomb) adds nothing after its first
    # occurrence, so it is parsed once; only "is it an exception line" matters for the repeats.
    exception_lines: dict[str, bool] = {}
    for i, raw in enumerate(lines):
        if (repeat := exception_lines.get(raw)) is not None:
            if repeat and i + 1 not in hit_lines:
                last_exception = i
            continue
        message = strip_prefix(raw)
        if not message or _NOISE.search(message):
            exception_lines[raw] = False
            continue
        is_exception = exception_lines[raw] = bool(_FINAL_EXCEPTION.match(message))
        if i + 1 in hit_lines:
            add(0, i, message)
        elif is_exception:
            add(1, i, message)
            last_exception = i
        elif m := _FRAME.match(message):
            add(3, i, _frame_hint(m.group(1), m.group(2)))
        elif _ERROR_WORDS.search(message):
            add(2, i, message)
    if last_exception >= 0:  # the final exception of the last traceback is the headline
        picked = [(p if i != last_exception else 0, i, m) for p, i, m in picked]
    chosen: list[tuple[int, int, str]] = []
    budget = limit
    for priority, index, message in sorted(picked, key=lambda t: (t[0], -t[1])):
        clipped = message[:400]
        if budget - len(clipped) < 0 and chosen:
            continue
        chosen.append((priority, index, clipped))
        budget -= len(clipped) + 1
        if budget <= 0:
            break
    if not chosen:
        return " ".join(strip_prefix(line) for line in lines[-20:])[:limit]
    return "\n".join(message for _, _, message in sorted(chosen, key=lambda t: t[1]))
