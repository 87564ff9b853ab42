"""Read any input within a byte budget: one truncation policy for files, stdin and Slack
attachments.

Input arrives as a stream of byte chunks (a file, stdin, an HTTP body). Gzip is inflated as a
stream with `max_length`, so memory stays bounded whatever the compression ratio: a bomb stops at
INFLATE_FACTOR budgets instead of expanding to gigabytes; a truncated gzip keeps what was read.

What does not fit the budget is cut the same way for plain and compressed input: keep the head (a
quarter of the budget: versions, config, the launcher's banner) and a larger tail (where the failure
is), cut at line breaks, with one line in the text saying how much of the middle was skipped.
"""

from __future__ import annotations

import zlib
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from kb.errors import IngestError

HEAD_SHARE = 0.25  # of the budget kept from the start; the rest is the tail
INFLATE_FACTOR = 4  # a compressed stream is inflated up to this many budgets, then abandoned
OUT_CHUNK = 1 << 20  # inflate at most this much per step: bounded memory
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Bounded:
    """What was kept of one input: head and tail bytes, and what the text should say was left
    out."""

    head: bytes
    tail: bytes = b""
    skipped_bytes: int = 0
    skipped_lines: int = 0
    notes: tuple[str, ...] = ()  # e.g. "the gzip stream ends early"

    @property
    def cut(self) -> bool:
        return self.skipped_bytes > 0 or bool(self.notes)


class HeadTail:
    """Keep the first `head_bytes` and the last `tail_bytes` of a stream of chunks, in bounded
    memory."""

    def __init__(self, max_bytes: int, head_share: float = HEAD_SHARE):
        self.max_bytes = max(1, max_bytes)
        self.head_limit = int(self.max_bytes * head_share)
        self.tail_limit = self.max_bytes - self.head_limit
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.total = 0
        self._dropped = 0  # bytes pushed out of the tail window
        self._dropped_lines = 0

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total += len(chunk)
        if len(self._head) < self.head_limit:
            take = self.head_limit - len(self._head)
            self._head += chunk[:take]
            chunk = chunk[take:]
            if not chunk:
                return
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        while self._tail_size - len(self._tail[0]) >= self.tail_limit:  # whole chunks first: cheap
            old = self._tail.popleft()
            self._tail_size -= len(old)
            self._drop(old)
        excess = self._tail_size - self.tail_limit
        if excess > 0:
            first = self._tail[0]
            self._drop(first[:excess])
            self._tail[0] = first[excess:]
            self._tail_size -= excess

    def _drop(self, data: bytes) -> None:
        self._dropped += len(data)
        self._dropped_lines += data.count(b"\n")

    def result(self, notes: tuple[str, ...] = ()) -> Bounded:
        head, tail = bytes(self._head), b"".join(self._tail)
        if not self._dropped:
            return Bounded(head=head + tail, notes=notes)
        # Cut at line breaks: the head ends after its last complete line, the tail starts at a new
        # one.
        skipped, lines = self._dropped, self._dropped_lines
        cut = head.rfind(b"\n")
        if cut >= 0:
            skipped += len(head) - cut - 1
            head = head[: cut + 1]
        start = tail.find(b"\n")
        if 0 <= start < len(tail) - 1:
            skipped += start + 1
            lines += 1
            tail = tail[start + 1 :]
        return Bounded(
            head=head, tail=tail, skipped_bytes=skipped, skipped_lines=lines, notes=notes
        )


def read_bounded(chunks: Iterable[bytes], max_bytes: int) -> Bounded:
    """Head and tail of a chunked stream, gzip (one or more members) inflated on the fly."""
    it = iter(chunks)
    first = b""
    for chunk in it:  # find the first non-empty chunk to sniff the format
        if chunk:
            first = chunk
            break
    keep = HeadTail(max_bytes)
    if not first.startswith(GZIP_MAGIC):
        keep.feed(first)
        for chunk in it:
            keep.feed(chunk)
        return keep.result()
    limit = INFLATE_FACTOR * max_bytes
    notes = _inflate(_chain(first, it), keep, limit)
    return keep.result(notes)


def _chain(first: bytes, rest: Iterable[bytes]) -> Iterable[bytes]:
    yield first
    yield from rest


def _inflate(chunks: Iterable[bytes], keep: HeadTail, limit: int) -> tuple[str, ...]:
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    produced = 0
    in_member = False  # fed bytes to a member that has not ended yet
    out = b""
    for chunk in chunks:
        data = chunk
        while data or (in_member and len(out) == OUT_CHUNK):  # a full step may leave output pending
            in_member = True
            try:
                out = inflater.decompress(data, OUT_CHUNK)
            except zlib.error as exc:
                if produced == 0:
                    raise IngestError(f"corrupt gzip data: {exc}") from None
                return (
                    f"the gzip data is corrupt after {produced:,} bytes; read what came before",
                )
            out = out[: limit - produced]  # stop exactly at the limit, whatever the chunking
            produced += len(out)
            keep.feed(out)
            if produced >= limit:
                return (
                    f"stopped decompressing at {limit:,} bytes (a gzip this large is likely a "
                    "bomb); the rest was not read",
                )
            # a member ended: another may follow (concatenated gzip, `cat a.gz b.gz`)
            if inflater.eof:
                in_member, out = False, b""
                data = inflater.unused_data
                if data and not data.startswith(GZIP_MAGIC):
                    return ()  # trailing garbage after a complete member: gzip(1) ignores it too
                inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
            else:
                data = inflater.unconsumed_tail
    if not in_member:
        return ()
    if produced == 0:
        raise IngestError("corrupt gzip data: the stream ends before any content")
    return ("the gzip stream ends early (a truncated file?); read what was there",)


def iter_file(fileobj: BinaryIO, size: int = 1 << 20) -> Iterable[bytes]:
    """A binary file object's chunks (stdin, an open file)."""
    while chunk := fileobj.read(size):
        yield chunk


def iter_path(path: Path, size: int = 1 << 20) -> Iterable[bytes]:
    """A file's chunks, opened lazily (so a list of inputs holds no open descriptors)."""
    with path.open("rb") as f:
        yield from iter_file(f, size)
