import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from index.scanner import HAVE_HYPERSCAN, MultiScanner, hyperscan_rejects, iter_line_chunks

PATTERNS = [r"ibv_modify_qp failed", r"CUDA out of memory\. Tried to allocate \d+", r"Xid \(PCI:[0-9a-f:]+\): 79", r"(?i)segmentation fault"]
TEXT = "\n".join(
    [
        "step 1 loss 2.0",
        "NCCL WARN Call to ibv_modify_qp failed with error Connection timed out",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20 MiB",
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
        "Segmentation Fault (core dumped)",
        "again ibv_modify_qp failed",
    ]
)
ENGINES = [True] + ([False] if HAVE_HYPERSCAN else [])


@pytest.mark.parametrize("force_re2", ENGINES)
def test_reports_pattern_and_line(force_re2):
    scanner = MultiScanner(PATTERNS, force_re2=force_re2)
    found = [(m.pattern, m.line) for m in scanner.scan(TEXT)]
    assert found == [(0, 2), (1, 3), (2, 4), (3, 5), (0, 6)]
    assert [(m.pattern, m.line) for m in scanner.scan(TEXT, first_only=True)] == [(0, 2), (1, 3), (2, 4), (3, 5)]


def test_hyperscan_is_used_when_installed():
    assert MultiScanner(PATTERNS).engine == ("hyperscan" if HAVE_HYPERSCAN else "re2")


@pytest.mark.parametrize("force_re2", ENGINES)
def test_line_numbers_survive_chunk_boundaries(force_re2):
    lines = [f"noise line {i}" for i in range(200)]
    lines[57] = "boom: ibv_modify_qp failed here"
    lines[181] = "ibv_modify_qp failed again"
    matches = MultiScanner(PATTERNS, force_re2=force_re2, chunk_bytes=64).scan("\n".join(lines))
    assert [m.line for m in matches] == [58, 182]


def test_chunks_end_on_line_breaks_and_cover_everything():
    data = b"".join(b"line %d\n" % i for i in range(1000)) + b"tail without newline"
    chunks = list(iter_line_chunks(data, size=100))
    assert b"".join(chunks) == data
    assert all(c.endswith(b"\n") for c in chunks[:-1])


def test_a_single_huge_line_is_one_chunk():
    data = b"x" * 5000 + b" ibv_modify_qp failed"
    assert list(iter_line_chunks(data, size=100)) == [data]


def test_empty_inputs():
    assert MultiScanner([]).scan("anything") == []
    assert MultiScanner(PATTERNS).scan("") == []


@pytest.mark.skipif(not HAVE_HYPERSCAN, reason="Hyperscan not installed")
def test_hyperscan_rejection_is_reported():
    assert hyperscan_rejects(r"ibv_modify_qp") is None
    assert hyperscan_rejects(r"a{1,100000}b") is not None


words = st.sampled_from(["alpha", "beta", "gamma", "NCCL", "WARN", "ibv", "timeout", "42"])
line = st.lists(words, min_size=0, max_size=6).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(line, min_size=0, max_size=30), st.lists(st.lists(words, min_size=1, max_size=2).map(" ".join), min_size=1, max_size=4, unique=True))
def test_agrees_with_python_re_line_by_line(lines, literals):
    patterns = [re.escape(lit) for lit in literals]
    text = "\n".join(lines)
    expected = sorted({(p, i + 1) for i, ln in enumerate(lines) for p, pat in enumerate(patterns) if re.search(pat, ln)}, key=lambda t: (t[1], t[0]))
    for force_re2 in ENGINES:
        got = [(m.pattern, m.line) for m in MultiScanner(patterns, force_re2=force_re2).scan(text)]
        assert got == expected


@pytest.mark.parametrize("force_re2", ENGINES)
def test_anchors_work_per_line_in_every_engine(force_re2):
    text = "abc end\nxyz\nfoo end\nlast"
    scanner = MultiScanner([r"end$", r"^xyz$", r"^last$"], force_re2=force_re2)
    assert [(m.pattern, m.line) for m in scanner.scan(text)] == [(0, 1), (1, 2), (0, 3), (2, 4)]


@pytest.mark.skipif(not HAVE_HYPERSCAN, reason="Hyperscan not installed")
def test_compiled_database_is_cached_and_reused(tmp_path):
    first = MultiScanner(PATTERNS, cache_dir=tmp_path)
    expected = [(m.pattern, m.line) for m in first.scan(TEXT)]
    assert len(list(tmp_path.glob("hyperscan-*.db"))) == 1
    again = MultiScanner(PATTERNS, cache_dir=tmp_path)
    assert [(m.pattern, m.line) for m in again.scan(TEXT)] == expected
    (next(tmp_path.glob("hyperscan-*.db"))).write_bytes(b"corrupt")
    assert [(m.pattern, m.line) for m in MultiScanner(PATTERNS, cache_dir=tmp_path).scan(TEXT)] == expected
