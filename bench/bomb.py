"""Gzip bomb and huge input: `traindoc diagnose` end to end on a ~2 MB gzip that inflates to ~4 GB
of log lines, and the ingest step alone (read, inflate, cut, normalize, redact): wall time and peak RSS.

    python bench/bomb.py [--json] [--gb 4]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import emit

LINE = b"[rank3]: NCCL WARN Call to ibv_modify_qp failed with error Connection timed out (same line again)\n"


def write_bomb(path: Path, gigabytes: float) -> int:
    z = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = LINE * ((8 << 20) // len(LINE))
    with path.open("wb") as f:
        for _ in range(int(gigabytes * (1 << 30)) // len(block)):
            f.write(z.compress(block))
        f.write(z.flush())
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gb", type=float, default=4.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bomb = Path(tmp) / "bomb.log.gz"
        size = write_bomb(bomb, args.gb)
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
        code = (
            "import resource, sys, time; from bot.bounded import iter_path; from bot.ingest import report_from_streams; "
            "t = time.perf_counter(); r = report_from_streams([('bomb.log.gz', iter_path(__import__('pathlib').Path(sys.argv[1])))]); "
            "print(round(time.perf_counter() - t, 2), round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024), len(r.text))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code, str(bomb)], env=env, capture_output=True, text=True, check=True
        )
        ingest_s, ingest_rss, kept = out.stdout.split()
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "bot.cli", "diagnose", str(bomb), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    emit(
        {
            "compressed_mb": round(size / (1 << 20), 2),
            "inflates_to_gb": args.gb,
            "ingest_s": float(ingest_s),
            "ingest_peak_rss_mb": int(ingest_rss),
            "kept_chars": int(kept),
            "diagnose_exit": proc.returncode,
            "diagnose_wall_s": round(wall, 2),
            "children_peak_rss_mb": round(rss),
        },
        args.json,
    )


if __name__ == "__main__":
    main()
