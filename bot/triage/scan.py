"""One streaming pass over a log file: the classified lines (events) and the rank census.

Memory stays bounded whatever the file size: the text is handed over in line-aligned chunks, each
chunk is classified by the multi-pattern scanner (only the lines with a hit are decoded and parsed),
and the census of rank prefixes (bot.triage.census) runs as one literal pass per chunk. What
survives a chunk is a handful of events per rank.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bot.triage.census import Census, census, census_first_line, new_scratch
from bot.triage.fields import Who, who
from bot.triage.rules import RULES, classify, line_scanner
from index.prefixes import Stamp

CHUNK_BYTES = 8 << 20  # bounded memory per file
MAX_LINE_CHARS = 1000  # an event keeps at most this much of its line, always with the match in it
CENSUS_SAMPLE_BYTES = 2 << 20
KEEP_FIRST = 3  # events kept per (worker, rule); "activity" rules keep the latest instead
MAX_EVENTS = 50_000
LOOKBACK_BYTES = 32 << 10


@dataclass(slots=True)
class Event:
    file: int
    line: int  # 1-based line within its file
    offset: int  # byte offset of the line start within its file
    text: str  # the line, clipped to MAX_LINE_CHARS around the match
    role: str  # "root" | "collateral" | "info"
    kind: str
    strong: bool
    rules: tuple[str, ...]
    prefix: Who
    ts: Stamp | None = None


@dataclass
class FileScan(Census):
    index: int = 0
    name: str = ""
    lines: int = 0  # lines as in "\n".join: newlines + 1
    size: int = 0
    events: list[Event] = field(default_factory=list)
    _kept: dict[tuple, int] = field(default_factory=dict, repr=False)
    # (line, rules) `wants` refused
    _refused: set[tuple[str, tuple[int, ...]]] = field(default_factory=set, repr=False)

    @staticmethod
    def _key(prefix: Who, first_rule: str) -> tuple:
        return (prefix.rank, prefix.local_rank, prefix.node, prefix.pid, first_rule)

    def wants(self, prefix: Who, first_rule: str, kind: str) -> bool:
        """Whether `keep` would store such an event (checked before the costly parts are built)."""
        if kind == "activity":
            return True
        under_cap = self._kept.get(self._key(prefix, first_rule), 0) < KEEP_FIRST
        return under_cap and len(self.events) < MAX_EVENTS

    def keep(self, event: Event) -> None:
        key = self._key(event.prefix, event.rules[0])
        if event.kind == "activity":  # what a rank was last busy with: keep the latest only
            if key in self._kept:
                self.events[self._kept[key]] = event
                return
            self._kept[key] = len(self.events)
        else:
            n = self._kept.get(key, 0)
            if n >= KEEP_FIRST:
                return
            self._kept[key] = n + 1
        if len(self.events) < MAX_EVENTS:
            self.events.append(event)


class Buffers:
    """One thread's working memory, reused across files (fresh pages are the slow part), and its
    Hyperscan scratch spaces (each scan in flight needs its own)."""

    def __init__(self, size: int | None = None):
        self.is_newline = np.empty(size or CHUNK_BYTES, dtype=bool)
        self.line_scratch = line_scanner().new_scratch()
        self._census_scratch: tuple | None = None

    def census_scratch(self) -> tuple:
        if self._census_scratch is None:
            self._census_scratch = new_scratch()
        return self._census_scratch

    def newline_mask(self, chunk: memoryview) -> np.ndarray:
        if len(self.is_newline) < len(chunk):
            self.is_newline = np.empty(len(chunk), dtype=bool)
        return np.equal(np.frombuffer(chunk, dtype=np.uint8), 10, out=self.is_newline[: len(chunk)])


def chunks_of_bytes(data: bytes, size: int | None = None) -> Iterator[memoryview]:
    """Line-aligned views of `data`, about `size` bytes each."""
    size = size or CHUNK_BYTES
    view = memoryview(data)
    start = 0
    while start < len(data):
        end = min(start + size, len(data))
        if end < len(data):
            cut = data.rfind(b"\n", start, end)
            end = cut + 1 if cut >= start else (data.find(b"\n", end) + 1 or len(data))
        yield view[start:end]
        start = end


# -- classification
# -----------------------------------------------------------------------------------


def scan_file(
    index: int,
    name: str,
    chunks: Iterator[memoryview],
    *,
    census_needed: bool = True,
    buffers: Buffers | None = None,
) -> FileScan:
    """Classify every line of one file, keeping the events and (if needed) the prefix census."""
    scan = FileScan(index=index, name=name)
    scanner = line_scanner()
    buffers = buffers or Buffers()
    newlines = 0
    offset = 0
    tail = b""  # the end of the previous chunk, for timestamps just before a chunk boundary
    for chunk in chunks:
        head = bytes(chunk[:4096])
        first_end = head.find(b"\n")
        census_first_line(
            head[: first_end if first_end >= 0 else 200][:200].decode("utf-8", "replace"), scan
        )
        if census_needed:
            census_scratch = buffers.census_scratch()
            # Head and tail of each chunk: every rank prints at start-up and at its end, and the
            # middle of a long log is step output; skipping it halves the census.
            if len(chunk) <= 2 * CENSUS_SAMPLE_BYTES:
                census(chunk, scan, census_scratch)
            else:
                census(chunk[:CENSUS_SAMPLE_BYTES], scan, census_scratch)
                census(chunk[-CENSUS_SAMPLE_BYTES:], scan, census_scratch)
        eq = buffers.newline_mask(chunk)
        hits = scanner.scan_offsets(chunk, scratch=buffers.line_scratch)
        if hits:
            _events_of_chunk(scan, chunk, eq, hits, offset, newlines, tail)
        newlines += int(np.count_nonzero(eq))
        tail = bytes(chunk[-LOOKBACK_BYTES:])
        offset += len(chunk)
    scan.lines = newlines + 1
    scan.size = offset
    return scan


def _events_of_chunk(
    scan: FileScan,
    chunk: memoryview,
    eq: np.ndarray,
    hits: Iterable[tuple[int, int]],
    file_offset: int,
    line_base: int,
    tail: bytes,
) -> None:
    haystack: Any = chunk.obj  # the bytes-like object the chunk views
    base = _offset_in(chunk)
    by_start: dict[int, set[int]] = {}
    first_end: dict[int, int] = {}  # where the first match on each line ends
    for pattern, end in hits:
        start = max(haystack.rfind(b"\n", base, base + max(end - 1, 0)) + 1 - base, 0)
        by_start.setdefault(start, set()).add(pattern)
        first_end[start] = min(first_end.get(start, end), end)
    counted, line = 0, line_base + 1  # lines are counted incrementally over the sorted starts
    for start in sorted(by_start):
        line += int(np.count_nonzero(eq[counted:start]))
        counted = start
        rule_ids = tuple(sorted(by_start[start]))
        verdict = classify(rule_ids)
        if verdict is None:
            continue
        role, kind, strong = verdict
        text = _line_text(chunk, haystack, base, start, first_end[start])
        if (text, rule_ids) in scan._refused:
            continue  # the same line again: refused for the same rank and rule as before
        prefix = who(text)
        rules = tuple(RULES[i].name for i in rule_ids)
        if not scan.wants(prefix, rules[0], kind):
            # a flood of one error: its first few copies per rank are kept already
            if len(scan._refused) < MAX_EVENTS:
                scan._refused.add((text, rule_ids))
            continue
        ts = prefix.ts
        if role == "root" and ts is None:
            ts = _timestamp_before(chunk, start, prefix, tail)
        scan.keep(
            Event(
                file=scan.index,
                line=line,
                offset=file_offset + start,
                text=text,
                role=role,
                kind=kind,
                strong=strong,
                rules=rules,
                prefix=prefix,
                ts=ts,
            )
        )


def _line_text(chunk: memoryview, haystack: Any, base: int, start: int, match_end: int) -> str:
    """The line at `start`, at most MAX_LINE_CHARS of it: its head (the prefixes) and, when the
    match lies further in, the stretch around the match, so the matched text is always kept."""
    stop = haystack.find(b"\n", base + start, base + match_end + MAX_LINE_CHARS)
    stop = stop - base if stop >= 0 else min(len(chunk), match_end + MAX_LINE_CHARS)
    if match_end - start <= MAX_LINE_CHARS - 100:
        return (
            bytes(chunk[start : min(stop, start + MAX_LINE_CHARS)])
            .decode("utf-8", "replace")
            .rstrip("\r")
        )
    head = bytes(chunk[start : start + 200]).decode("utf-8", "replace")
    around = bytes(chunk[max(start + 200, match_end - 500) : min(stop, match_end + 200)]).decode(
        "utf-8", "replace"
    )
    return f"{head} … {around}".rstrip("\r")


def _offset_in(view: memoryview) -> int:
    """Where a 1-D byte memoryview starts inside the object it views."""
    if not len(view):
        return 0
    obj: Any = view.obj
    whole = np.frombuffer(obj, dtype=np.uint8)
    part = np.frombuffer(view, dtype=np.uint8)
    return int(part.__array_interface__["data"][0] - whole.__array_interface__["data"][0])


def _timestamp_before(
    chunk: memoryview, line_start: int, prefix: Who, tail: bytes = b""
) -> Stamp | None:
    """A Python traceback line carries no time: take the same rank's latest timestamp before it."""
    window = bytes(chunk[max(0, line_start - LOOKBACK_BYTES) : line_start])
    if line_start < LOOKBACK_BYTES:
        window = tail[-(LOOKBACK_BYTES - line_start) :] + window if tail else window
    text = window.decode("utf-8", "replace")
    for line in reversed(text.split("\n")[-200:]):
        if not line:
            continue
        p = who(line)
        if (p.rank, p.local_rank) != (prefix.rank, prefix.local_rank):
            continue
        if p.ts is not None:
            return p.ts
    return None
