"""One truncation policy for every input: head and tail kept, gzip inflated as a bounded stream."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import pytest

from bot.bounded import HeadTail, read_bounded
from bot.ingest import IngestError, decode, read_text
from kb.errors import InputError

LOG = b"".join(b"[rank%d]: step %06d loss 1.23\n" % (i % 8, i) for i in range(40_000))  # ~1.2 MB
HEAD = b"torch 2.4.0 nccl 2.20.5 cuda 12.4\n"
FAILURE = b"[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
BIG = HEAD + LOG + FAILURE


def _chunks(data: bytes, size: int = 4096):
    return (data[i : i + size] for i in range(0, len(data), size))


def _bomb(inflated: int, line: bytes = b"\0" * 1024) -> bytes:
    """A gzip that inflates to `inflated` bytes, built as a stream (never whole in memory)."""
    z = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = line * (1 << 20 // len(line))
    out = [z.compress(block) for _ in range(inflated // len(block))]
    return b"".join(out) + z.flush()


def test_small_input_is_kept_whole():
    assert read_bounded([b"a\n", b"b\n"], 100).head == b"a\nb\n"
    assert not read_bounded([b"a\n"], 100).cut


def test_head_and_tail_are_kept_at_line_breaks_with_the_middle_counted():
    kept = read_bounded(_chunks(BIG), 200_000)
    assert kept.head.startswith(HEAD) and kept.head.endswith(b"\n")
    assert kept.tail.endswith(FAILURE) and kept.tail.startswith(b"[rank")
    assert len(kept.head) <= 50_000 < len(kept.tail) <= 150_000  # the tail is the larger share
    assert kept.skipped_bytes == len(BIG) - len(kept.head) - len(kept.tail)
    assert kept.skipped_lines == BIG.count(b"\n") - kept.head.count(b"\n") - kept.tail.count(b"\n")


def test_plain_and_gzip_input_are_cut_the_same_way():
    plain = read_text(_chunks(BIG), name="run.log", max_bytes=400_000)
    packed = read_text(_chunks(gzip.compress(BIG)), name="run.log", max_bytes=400_000)
    assert plain == packed
    assert "RuntimeError: CUDA error" in plain and "torch 2.4.0" in plain
    assert "skipped" in plain and "lines) in the middle of run.log" in plain


def test_chunk_size_does_not_change_the_result():
    assert read_bounded(_chunks(BIG, 7), 10_000) == read_bounded([BIG], 10_000)
    packed = gzip.compress(BIG)
    assert read_bounded(_chunks(packed, 5), 10_000) == read_bounded([packed], 10_000)


def test_concatenated_gzip_members_are_all_read():
    assert decode(gzip.compress(b"first\n") + gzip.compress(b"second\n")) == "first\nsecond\n"


def test_truncated_gzip_keeps_what_was_readable_and_says_so():
    packed = gzip.compress(BIG)
    text = decode(packed[: len(packed) // 2], name="cut.log.gz")
    assert text.startswith(HEAD.decode()) and "ends early" in text and "cut.log.gz" in text


def test_corrupt_gzip_is_an_error():
    with pytest.raises(IngestError, match="gzip"):
        decode(b"\x1f\x8b" + b"garbage" * 10)
    with pytest.raises(InputError, match="gzip"):
        read_bounded([b"\x1f\x8b\x08"], 100)


def test_gzip_bomb_stops_at_the_cap_in_bounded_memory():
    bomb = _bomb(256 << 20)  # 256 MB of NULs in about 250 kB
    assert len(bomb) < 1 << 20
    tracemalloc.start()
    try:
        kept = read_bounded([bomb], 1 << 20)  # inflate limit: 4 MB
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert any("stopped decompressing" in n for n in kept.notes)
    assert len(kept.head) + len(kept.tail) <= 1 << 20
    assert peak < 16 << 20  # the cap plus a few inflate steps, not the 256 MB
    with pytest.raises(IngestError, match="binary"):  # NULs: refused as binary, quickly
        decode(bomb, max_bytes=1 << 20)


def test_text_bomb_is_answered_with_a_note():
    bomb = _bomb(64 << 20, line=b"NCCL WARN same line again\n" * 40)
    text = decode(bomb, name="bomb.log.gz", max_bytes=1 << 20)
    assert "stopped decompressing" in text and "bomb.log.gz" in text
    assert len(text) < 1.1 * (1 << 20)


def test_head_tail_fed_byte_by_byte():
    keep = HeadTail(10)  # head 2 bytes, tail 8
    for ch in b"aa\nbb\ncc\ndd\nee\nff\n":
        keep.feed(bytes([ch]))
    r = keep.result()
    assert (r.head, r.tail) == (b"aa", b"ee\nff\n")  # the tail starts on a whole line
    assert (r.skipped_bytes, r.skipped_lines) == (10, 4)
