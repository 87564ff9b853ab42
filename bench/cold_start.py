"""Cold CLI start (a fingerprint-decided case and a full-path question), index build time, peak RSS.

Each cold start is a fresh `traindoc` process (median of N); the index build is timed into a
temporary directory from scratch.

    python bench/cold_start.py [--json] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import emit

DECISIVE_LOG = (
    "[rank3]: Traceback (most recent call last):\n"
    '[rank3]:   File "/workspace/train.py", line 88, in <module>\n'
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 3 has a total capacity of 79.15 GiB of which 1.21 GiB is free.\n"
)
QUESTION = "why does dcp.save hang at 64 GPUs?"
TRAINDOC = str(Path(sys.executable).with_name("traindoc"))


def timed_run(args: list[str], env: dict[str, str], stdin: str | None = None) -> tuple[float, float, dict]:
    """Wall seconds, peak RSS (MB) of the child, and its JSON output."""
    code = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], input=sys.stdin.read(), capture_output=True, text=True)\n"
        "dt = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(json.dumps({'s': dt, 'rss': rss, 'rc': p.returncode, 'out': p.stdout, 'err': p.stderr[-500:]}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, *args], input=stdin or "", capture_output=True, text=True, env=env)
    result = json.loads(proc.stdout)
    if result["rc"] != 0:
        raise SystemExit(f"{args}: exit {result['rc']}: {result['err']}")
    return result["s"], result["rss"], json.loads(result["out"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "TRAINDOC_INDEX_DIR": str(Path(tmp) / "index")}
        started = time.perf_counter()
        subprocess.run([TRAINDOC, "index", "build"], env=env, check=True, capture_output=True)
        build_seconds = time.perf_counter() - started

        decisive = [timed_run([TRAINDOC, "diagnose", "-", "--json"], env, DECISIVE_LOG) for _ in range(args.repeats)]
        full = [timed_run([TRAINDOC, "ask", QUESTION, "--json"], env) for _ in range(args.repeats)]
    emit(
        {
            "index_build_s": round(build_seconds, 2),
            "cold_decisive_s": round(statistics.median(r[0] for r in decisive), 3),
            "cold_decisive_rss_mb": round(max(r[1] for r in decisive), 1),
            "decisive_answer": decisive[0][2]["results"][0]["id"],
            "cold_full_s": round(statistics.median(r[0] for r in full), 3),
            "cold_full_rss_mb": round(max(r[1] for r in full), 1),
            "full_answer": full[0][2]["results"][0]["id"],
            "repeats": args.repeats,
        },
        args.json,
    )


if __name__ == "__main__":
    main()
