"""Benchmark rank-aware triage at job scale: 64 per-rank logs of 10 MB each, streamed from disk.

`python bench/triage.py --json` prints one JSON line: files, mb, seconds (the first triage_paths
call, scanner compilation included), warm_seconds (a second call), mb_per_s, peak_rss_mb.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.triage import triage_paths
from tests.triage_scenarios import write_big_rank_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=64)
    parser.add_argument("--mb", type=int, default=10, help="size of each file")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="traindoc-bench-") as tmp:
        paths = []
        for rank in range(args.files):
            path = Path(tmp) / f"node{rank // 8 + 1:02d}" / f"rank{rank}.log"
            path.parent.mkdir(exist_ok=True)
            write_big_rank_file(path, rank, args.files, args.mb, culprit=min(17, args.files - 1))
            paths.append(path)
        total_mb = sum(p.stat().st_size for p in paths) / (1 << 20)
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        started = time.perf_counter()
        result = triage_paths(paths)
        seconds = time.perf_counter() - started
        started = time.perf_counter()
        triage_paths(paths)
        warm = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {
        "files": len(paths),
        "mb": round(total_mb, 1),
        "seconds": round(seconds, 3),
        "warm_seconds": round(warm, 3),
        "mb_per_s": round(total_mb / seconds, 1),
        "peak_rss_mb": round(peak, 1),
        "rss_before_triage_mb": round(rss_before, 1),
        "initiating_rank": result.initiating.rank if result and result.initiating else None,
        "collateral": len(result.collateral_ranks) if result else 0,
    }
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key:>22}: {value}")
        if result is not None:
            print(f"{'summary':>22}: {result.summary}")


if __name__ == "__main__":
    main()
