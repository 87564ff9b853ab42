"""One multi-pattern scanner compiled once for many regexes (Hyperscan, or RE2 where it is absent).

Both engines are linear-time: a hostile log cannot make a scan backtrack. Matches are reported as
(pattern index, 1-based line number) pairs, the line of the match's end.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kb.patterns import compile_linear, line_mode

try:  # optional accelerator: degrade to RE2 when the wheel is missing
    import hyperscan

    HAVE_HYPERSCAN = True
except ImportError:  # pragma: no cover - exercised by the RE2 tests with force_re2
    hyperscan = None  # type: ignore[assignment]
    HAVE_HYPERSCAN = False

CHUNK_BYTES = 8 << 20  # scan large inputs in line-aligned chunks: bounded memory


@dataclass(frozen=True)
class Match:
    pattern: int
    line: int  # 1-based


def hyperscan_rejects(pattern: str) -> str | None:
    """Why Hyperscan cannot compile `pattern`, or None (also None when Hyperscan is absent)."""
    if not HAVE_HYPERSCAN:
        return None
    try:
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(
            expressions=[line_mode(pattern).encode()], ids=[0], flags=[hyperscan.HS_FLAG_ALLOWEMPTY]
        )
    except hyperscan.error as exc:
        return str(exc)
    return None


def _line_starts(buf: bytes) -> np.ndarray:
    return np.flatnonzero(np.frombuffer(buf, dtype=np.uint8) == 10)


def iter_line_chunks(data: bytes, size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Split `data` into chunks of about `size` bytes that end on a line break."""
    start = 0
    while start < len(data):
        end = min(start + size, len(data))
        if end < len(data):
            cut = data.rfind(b"\n", start, end)
            end = cut + 1 if cut >= start else data.find(b"\n", end) + 1 or len(data)
        yield data[start:end]
        start = end


class MultiScanner:
    """Scan text for many patterns in one pass."""

    def __init__(
        self,
        patterns: Sequence[str],
        *,
        force_re2: bool = False,
        cache_dir: Path | None = None,
        chunk_bytes: int = CHUNK_BYTES,
    ):
        self.patterns = list(patterns)
        self.chunk_bytes = chunk_bytes
        self.cache_dir = cache_dir  # compiled Hyperscan databases are kept here between runs
        self.engine = "hyperscan" if HAVE_HYPERSCAN and not force_re2 else "re2"
        self._regexes = [compile_linear(p) for p in self.patterns]  # also validates
        self._dbs: dict[bool, object] = {}
        self._db_lock = threading.Lock()
        # Hyperscan scratch per thread: one scratch serves one scan at a time
        self._local = threading.local()
        if self.engine == "re2":
            self._set = None
            if self.patterns:
                self._set = _re2_set(self.patterns)

    def _hs_db(self, first_only: bool) -> Any:
        with self._db_lock:  # compiled once even when the first scans race
            return self._hs_db_locked(first_only)

    def _hs_db_locked(self, first_only: bool) -> Any:
        if first_only not in self._dbs:
            flag = hyperscan.HS_FLAG_ALLOWEMPTY
            if first_only:
                flag |= hyperscan.HS_FLAG_SINGLEMATCH
            expressions = [line_mode(p).encode() for p in self.patterns]

            def build() -> Any:
                db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
                db.compile(
                    expressions=expressions,
                    ids=list(range(len(expressions))),
                    flags=[flag] * len(expressions),
                )
                return db

            self._dbs[first_only] = load_or_build(
                self.cache_dir, b"\0".join(expressions) + f"|{flag}".encode(), build
            )
        return self._dbs[first_only]

    def scan(self, text: str | bytes, *, first_only: bool = False) -> list[Match]:
        """All (pattern, line) pairs, each pair once, in line order. With `first_only`, at most the
        first line per pattern (per chunk) is reported: enough for retrieval, much faster."""
        if not self.patterns:
            return []
        data = text.encode("utf-8", "replace") if isinstance(text, str) else text
        found: dict[tuple[int, int], None] = {}
        line_base = 0
        for chunk in iter_line_chunks(data, self.chunk_bytes):
            for pattern, line in self._scan_chunk(chunk, first_only):
                found.setdefault((pattern, line_base + line), None)
            if len(chunk) < len(data):  # more chunks follow: carry the line count
                line_base += int(np.count_nonzero(np.frombuffer(chunk, dtype=np.uint8) == 10))
        matches = [Match(p, line) for p, line in found]
        matches.sort(key=lambda m: (m.line, m.pattern))
        if first_only:
            first: dict[int, Match] = {}  # each pattern's first match, in line order
            for m in matches:
                first.setdefault(m.pattern, m)
            matches = list(first.values())
        return matches

    def new_scratch(self) -> Any:
        """Hyperscan scratch space for one thread (concurrent scans must not share one)."""
        return (
            hyperscan.Scratch(self._hs_db(False))
            if self.engine == "hyperscan" and self.patterns
            else None
        )

    def _thread_scratch(self, first_only: bool) -> Any:
        """This thread's scratch for the database: never the database's shared default one."""
        scratches = getattr(self._local, "scratches", None)
        if scratches is None:
            scratches = self._local.scratches = {}
        if first_only not in scratches:
            scratches[first_only] = hyperscan.Scratch(self._hs_db(first_only))
        return scratches[first_only]

    def scan_offsets(
        self, data: Any, *, first_only: bool = False, scratch: Any = None
    ) -> list[tuple[int, int]]:
        """(pattern, end offset) pairs over any bytes-like `data`: for callers that stream chunks
        and need line numbers only for the few hits."""
        if not self.patterns:
            return []
        if self.engine == "hyperscan":
            out: list[tuple[int, int]] = []
            self._hs_db(first_only).scan(
                data,
                match_event_handler=lambda pid, _start, end, _flags, _ctx: out.append((pid, end)),
                scratch=scratch if scratch is not None else self._thread_scratch(first_only),
            )
            return out
        chunk = bytes(data)
        hits = (
            self._set.Match(chunk) if self._set is not None else None
        ) or []  # Match gives None for none
        offsets: list[tuple[int, int]] = []
        for pid in hits:
            for m in self._regexes[pid].finditer(chunk):
                offsets.append((pid, m.end()))
                if first_only:
                    break
        return offsets

    def _scan_chunk(self, chunk: bytes, first_only: bool) -> Iterable[tuple[int, int]]:
        ends = self.scan_offsets(chunk, first_only=first_only)
        if not ends:
            return []
        newlines = _line_starts(chunk)
        ids = np.fromiter((e[0] for e in ends), dtype=np.int64, count=len(ends))
        offs = np.fromiter((max(e[1] - 1, 0) for e in ends), dtype=np.int64, count=len(ends))
        lines = np.searchsorted(newlines, offs, side="left") + 1
        return zip(ids.tolist(), lines.tolist(), strict=False)


def load_or_build(cache_dir: Path | None, key: bytes, build: Callable[[], Any]) -> Any:
    """A Hyperscan database from the on-disk cache (keyed by `key` and the Hyperscan version), or
    built by `build` and cached: compiling takes tenths of a second to seconds, loading
    milliseconds."""
    path = None
    if cache_dir is not None:
        version = hyperscan.__version__  # type: ignore[attr-defined]
        digest = hashlib.sha256(key + f"|{version}".encode()).hexdigest()[:24]
        path = cache_dir / f"hyperscan-{digest}.db"
    db = _load_db(path) if path is not None else None
    if db is None:
        db = build()
        if path is not None:
            _save_db(path, db)
    return db


def _load_db(path: Path) -> Any:
    try:
        db = hyperscan.loadb(path.read_bytes(), mode=hyperscan.HS_MODE_BLOCK)
        db.scratch = hyperscan.Scratch(db)  # a deserialized database comes without one
        return db
    except (OSError, hyperscan.error, TypeError):
        return None  # absent, or written by another Hyperscan build: compile afresh


def _save_db(path: Path, db: Any) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(hyperscan.dumpb(db))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs the compile time


def _re2_set(patterns: Sequence[str]) -> Any:
    import re2

    options = re2.Options()
    options.max_mem = 256 << 20
    options.log_errors = False
    s = re2.Set.SearchSet(options)
    for p in patterns:
        s.Add(line_mode(p).encode())
    s.Compile()
    return s
