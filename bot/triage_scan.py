"""One streaming pass over a log file: the classified lines (events) and which rank prefixes occur.

Memory stays bounded whatever the file size: the file is read in line-aligned chunks, each chunk is
classified by the multi-pattern scanner in small pieces (only pieces with a hit are split into
lines), and a census of rank prefixes ("[rank17]:", "[default3]:", "12: ", "[1,12]<stdout>:") runs as
one literal Hyperscan pass per chunk. What survives a chunk is a handful of events per rank.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from bot.triage_patterns import RULES, Prefix, classify, line_scanner, parse_prefix, parse_timestamp

try:  # optional accelerator, as in index.scanner
    import hyperscan
except ImportError:  # pragma: no cover
    hyperscan = None

CHUNK_BYTES = 8 << 20  # read size: bounded memory per file
MAX_LINE_CHARS = 1000
CENSUS_SAMPLE_BYTES = 2 << 20
CENSUS_RANKS = 1024  # prefix literals compiled for ranks below this; larger ranks via a regex
KEEP_FIRST = 3  # events kept per (worker, rule); "activity" rules keep the latest instead
MAX_EVENTS = 50_000
LOOKBACK_BYTES = 32 << 10


@dataclass(slots=True)
class Event:
    file: int
    line: int  # 1-based line within its file
    offset: int  # byte offset of the line start within its file
    text: str
    role: str  # "root" | "collateral" | "info"
    kind: str
    strong: bool
    rules: tuple[str, ...]
    prefix: Prefix
    ts: tuple[float, str] | None = None


@dataclass
class FileScan:
    index: int
    name: str
    lines: int = 0  # lines as in "\n".join: newlines + 1
    size: int = 0
    events: list[Event] = field(default_factory=list)
    ranks: set[int] = field(default_factory=set)  # global ranks seen in line prefixes
    local_ranks: set[int] = field(default_factory=set)  # "[default3]:" prefixes
    label_ranks: set[int] = field(default_factory=set)  # srun --label "12: " (trusted only if several)
    _kept: dict[tuple, int] = field(default_factory=dict, repr=False)

    def keep(self, event: Event) -> None:
        p = event.prefix
        key = (p.rank, p.local_rank, p.node, p.pid, event.rules[0])
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


# -- reading ------------------------------------------------------------------------------------------
# Large fresh allocations are slow (page faults on every 4 KB page), so a file is read into one reused
# buffer and handed on as memoryview chunks; only 64 KB pieces are ever copied.


class Buffers:
    """One thread's working memory, reused across files (fresh pages are the slow part), and its
    Hyperscan scratch spaces (each scan in flight needs its own)."""

    def __init__(self, size: int | None = None):
        size = size or CHUNK_BYTES
        self.read = bytearray(size)
        self.is_newline = np.empty(size, dtype=bool)
        self.line_scratch = line_scanner().new_scratch()
        self._census_scratch: tuple | None = None

    def census_scratch(self) -> tuple:
        """Scratch for the census databases, made when a file first needs a census."""
        if self._census_scratch is None:
            db, big = _census_db(), _big_rank_db()
            self._census_scratch = (hyperscan.Scratch(db) if db is not None else None,
                                    hyperscan.Scratch(big) if big is not None else None)
        return self._census_scratch

    def newline_mask(self, chunk: memoryview) -> np.ndarray:
        if len(self.is_newline) < len(chunk):
            self.is_newline = np.empty(len(chunk), dtype=bool)
        return np.equal(np.frombuffer(chunk, dtype=np.uint8), 10, out=self.is_newline[: len(chunk)])


def chunks_of_path(path: Path, buffers: Buffers | None = None) -> Iterator[memoryview]:
    """Line-aligned chunks of a file, views into one reused buffer (valid until the next chunk)."""
    buf = buffers.read if buffers is not None else bytearray(CHUNK_BYTES)
    view = memoryview(buf)
    carry = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            if carry == len(buf):  # one line longer than the buffer: grow (a new buffer, views stay valid)
                bigger = bytearray(2 * len(buf))
                bigger[:carry] = buf
                buf, view = bigger, memoryview(bigger)
                if buffers is not None:
                    buffers.read = bigger
            n = f.readinto(view[carry:])
            if not n:
                if carry:
                    yield view[:carry]
                return
            end = carry + n
            cut = buf.rfind(b"\n", 0, end)
            if cut < 0:
                carry = end
                continue
            yield view[: cut + 1]
            tail = end - cut - 1
            buf[:tail] = buf[cut + 1 : end]
            carry = tail


def chunks_of_bytes(data: bytes, size: int | None = None) -> Iterator[memoryview]:
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


# -- the rank-prefix census ---------------------------------------------------------------------------

_CENSUS_FORMATS = (b"\n[rank%d]:", b"\n[default%d]:", b"\n%d: ")
_CENSUS_KIND = ("rank", "local", "label")
# Ranks past the literal table, and mpirun --tag-output ("[1,12]<stdout>:"), by regex when present.
_BIG_RANK = re.compile(rb"\n\[rank(\d{4,})\]:|\n\[default(\d{4,})\]:|,(\d+)\]<std(?:out|err)>:")


@cache
def _big_rank_db():
    """Presence test for the prefixes the literal table does not cover (one report per chunk)."""
    if hyperscan is None:
        return None
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=[rb"\n\[(?:rank|default)\d{4,}\]:", rb",\d+\]<std(?:out|err)>:"], ids=[0, 1],
               flags=hyperscan.HS_FLAG_SINGLEMATCH)
    return db


@cache
def _census_db():
    if hyperscan is None:
        return None
    literals = [fmt % r for r in range(CENSUS_RANKS) for fmt in _CENSUS_FORMATS]
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=literals, ids=list(range(len(literals))), flags=hyperscan.HS_FLAG_SINGLEMATCH, literal=True)
    return db


def census(chunk: memoryview, scan: FileScan, buffers: Buffers) -> None:
    """Record the distinct rank prefixes at line starts in `chunk` (after its first line)."""
    db = _census_db()
    census_scratch, big_scratch = buffers.census_scratch()
    nformats = len(_CENSUS_FORMATS)
    if db is not None:
        found: list[int] = []
        db.scan(chunk, match_event_handler=lambda pid, _f, _t, _fl, _c: found.append(pid), scratch=census_scratch)
        for pid in found:
            rank, fmt = divmod(pid, nformats)
            _census_add(scan, _CENSUS_KIND[fmt], rank)
    else:  # pragma: no cover - RE2-only installs
        for m in re.finditer(rb"\n\[(rank|default)(\d+)\]:|\n(\d{1,6}): |,(\d+)\]<std(?:out|err)>:", chunk):
            if m.group(1):
                _census_add(scan, "rank" if m.group(1) == b"rank" else "local", int(m.group(2)))
            else:
                _census_add(scan, "label" if m.group(3) else "rank", int(m.group(3) or m.group(4)))
    big = _big_rank_db()
    present: list[int] = []
    if big is not None:
        big.scan(chunk, match_event_handler=lambda pid, _f, _t, _fl, _c: present.append(pid), scratch=big_scratch)
    if present or big is None:
        for m in _BIG_RANK.finditer(chunk):
            if m.group(2):
                scan.local_ranks.add(int(m.group(2)))
            else:
                scan.ranks.add(int(m.group(1) or m.group(3)))


def _census_add(scan: FileScan, kind: str, rank: int) -> None:
    if kind == "rank":
        scan.ranks.add(rank)
    elif kind == "local":
        scan.local_ranks.add(rank)
    else:
        scan.label_ranks.add(rank)


def _census_first_line(line: str, scan: FileScan) -> None:
    if not line.startswith(("[", "(")):  # a bare "12: " first line is too weak to count
        return
    p = parse_prefix(line)
    if p.rank is not None:
        scan.ranks.add(p.rank)
    elif p.local_rank is not None:
        scan.local_ranks.add(p.local_rank)


# -- classification -----------------------------------------------------------------------------------


def scan_file(index: int, name: str, chunks: Iterator[memoryview], *, census_needed: bool = True,
              buffers: Buffers | None = None) -> FileScan:
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
        _census_first_line(head[: first_end if first_end >= 0 else 200][:200].decode("utf-8", "replace"), scan)
        if census_needed:
            # Head and tail of each chunk: every rank prints at start-up and at its end, and the
            # middle of a long log is step output; skipping it halves the census.
            if len(chunk) <= 2 * CENSUS_SAMPLE_BYTES:
                census(chunk, scan, buffers)
            else:
                census(chunk[:CENSUS_SAMPLE_BYTES], scan, buffers)
                census(chunk[-CENSUS_SAMPLE_BYTES:], scan, buffers)
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


def _events_of_chunk(scan: FileScan, chunk: memoryview, eq: np.ndarray, hits, file_offset: int, line_base: int,
                     tail: bytes) -> None:
    haystack, base = chunk.obj, _offset_in(chunk)
    by_start: dict[int, set[int]] = {}
    for pattern, end in hits:
        start = haystack.rfind(b"\n", base, base + max(end - 1, 0)) + 1 - base
        by_start.setdefault(max(start, 0), set()).add(pattern)
    counted, line = 0, line_base + 1  # lines are counted incrementally over the sorted starts
    for start in sorted(by_start):
        line += int(np.count_nonzero(eq[counted:start]))
        counted = start
        verdict = classify(sorted(by_start[start]))
        if verdict is None:
            continue
        role, kind, strong = verdict
        stop = haystack.find(b"\n", base + start, base + start + 4 * MAX_LINE_CHARS)
        stop = stop - base if stop >= 0 else min(len(chunk), start + 4 * MAX_LINE_CHARS)
        text = bytes(chunk[start:stop]).decode("utf-8", "replace").rstrip("\r")[:MAX_LINE_CHARS]
        prefix = parse_prefix(text)
        ts = parse_timestamp(prefix.message) or parse_timestamp(text)
        if role == "root" and ts is None:
            ts = _timestamp_before(chunk, start, prefix, tail)
        scan.keep(Event(
            file=scan.index,
            line=line,
            offset=file_offset + start,
            text=text,
            role=role,
            kind=kind,
            strong=strong,
            rules=tuple(RULES[i].name for i in sorted(by_start[start])),
            prefix=prefix,
            ts=ts,
        ))


def _offset_in(view: memoryview) -> int:
    """Where a 1-D byte memoryview starts inside the object it views."""
    if not len(view):
        return 0
    whole = np.frombuffer(view.obj, dtype=np.uint8)
    part = np.frombuffer(view, dtype=np.uint8)
    return int(part.__array_interface__["data"][0] - whole.__array_interface__["data"][0])


def _timestamp_before(chunk: memoryview, line_start: int, prefix: Prefix, tail: bytes = b"") -> tuple[float, str] | None:
    """A Python traceback line carries no time: take the same rank's latest timestamp before it."""
    window = bytes(chunk[max(0, line_start - LOOKBACK_BYTES) : line_start])
    if line_start < LOOKBACK_BYTES:
        window = tail[-(LOOKBACK_BYTES - line_start) :] + window if tail else window
    window = window.decode("utf-8", "replace")
    for line in reversed(window.split("\n")[-200:]):
        if not line:
            continue
        p = parse_prefix(line)
        if (p.rank, p.local_rank) != (prefix.rank, prefix.local_rank):
            continue
        if (ts := parse_timestamp(p.message) or parse_timestamp(line)) is not None:
            return ts
    return None
