"""Fingerprint scanning throughput: every KB fingerprint in one multi-pattern pass over a generated
100 MB log (first occurrence of each, as a diagnosis asks; every match also reported), against one-pattern-at-a-time Python `re` in the same run (measured on a slice and
reported per MB, since the naive scan of 100 MB would take many minutes).

    python bench/scan.py [--json] [--mb 100]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import emit, median_seconds, peak_rss_mb
from index.scanner import MultiScanner
from kb.load import load_kb

NOISE = [
    "[rank{r}]:[I1202 03:{m:02d}:{s:02d}.{us:06d} {pid} torch/distributed/run.py:{n}] step {n} loss {l:.4f} lr 3.0e-04 grad_norm {g:.3f}",
    "node{r:02d}:{pid}:{tid} [{d}] NCCL INFO Channel {c:02d}/0 : {r}[{d}] -> {q}[{d}] via P2P/IPC",
    "{{'loss': {l:.4f}, 'grad_norm': {g:.3f}, 'learning_rate': 2e-05, 'epoch': 0.{n}}}",
    "INFO 12-02 03:{m:02d}:{s:02d} [metrics.py:{n}] Avg prompt throughput: {g:.1f} tokens/s, Running: {d} reqs",
    "  {n}%|#####     | {n}/{pid} [00:{m:02d}<00:{s:02d}, {g:.2f}it/s]",
]
ERRORS = [
    "node03:2211:2290 [2] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out errno 110",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB",
    "[rank5]:[E1202 03:13:11.123456 4321 ProcessGroupNCCL.cpp:616] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8812, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.",
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
]


def generate(mb: int, seed: int = 7) -> bytes:
    rng = random.Random(seed)
    lines: list[str] = []
    size = 0
    while size < mb << 20:
        if rng.random() < 1e-4:
            line = rng.choice(ERRORS)
        else:
            line = rng.choice(NOISE).format(
                r=rng.randrange(64), m=rng.randrange(60), s=rng.randrange(60), us=rng.randrange(10**6),
                pid=rng.randrange(10**5), n=rng.randrange(10**4), l=rng.random() * 3, g=rng.random() * 10,
                tid=rng.randrange(10**5), d=rng.randrange(8), c=rng.randrange(32), q=rng.randrange(64),
            )
        lines.append(line)
        size += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--naive-mb", type=int, default=2)
    args = parser.parse_args()

    patterns = sorted({f.pattern for e in load_kb().entries for f in e.fingerprints})
    data = generate(args.mb)
    scanner = MultiScanner(patterns)
    scanner.scan(b"warm up\n")  # compile the database outside the timing
    # What a diagnosis does: the first line of every pattern that occurs (per 8 MB chunk).
    fast = median_seconds(lambda: scanner.scan(data, first_only=True), repeats=3)
    every_match = median_seconds(lambda: scanner.scan(data), repeats=1)

    naive_slice = data[: args.naive_mb << 20].decode()
    compiled = []
    for p in patterns:
        try:
            compiled.append(re.compile(p))
        except re.error:
            pass  # RE2-only syntax; the naive side scans fewer patterns, which flatters it
    started = time.perf_counter()
    for regex in compiled:  # the same question, one pattern at a time: where does it first occur?
        regex.search(naive_slice)
    naive = time.perf_counter() - started
    mb = len(data) / (1 << 20)
    naive_mb = len(naive_slice.encode()) / (1 << 20)
    emit(
        {
            "mb": round(mb, 1),
            "patterns": len(patterns),
            "engine": scanner.engine,
            "seconds": round(fast, 3),
            "mb_per_s": round(mb / fast, 1),
            "every_match_mb_per_s": round(mb / every_match, 1),
            "naive_mb_per_s": round(naive_mb / naive, 3),
            "naive_patterns": len(compiled),
            "ratio": round((mb / fast) / (naive_mb / naive), 1),
            "peak_rss_mb": round(peak_rss_mb(), 1),
        },
        args.json,
    )


if __name__ == "__main__":
    main()
