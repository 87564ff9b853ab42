"""Cold and warm CLI cost of each query encoder (ONNX Runtime vs sentence-transformers/torch).

Each cold start is a fresh `traindoc` process timed end to end (wall seconds, peak RSS of the
child), runs of the two encoders interleaved so machine load hits both alike; medians and ratios.
Cases: `ask` (always embeds), `diagnose` of a log no fingerprint decides (embeds), `diagnose` of a
log a strong fingerprint decides (never embeds). Warm: one serving process per encoder diagnoses a
set of texts repeatedly (p50/p95 ms), then reports its RSS and whether torch was ever imported.
With --eval DIR it also runs `traindoc eval DIR` with each encoder and compares top-1/top-3.

    python bench/cold_start.py [--json] [--repeats 5] [--index-dir DIR] [--eval DIR]

Without --index-dir the index (and its ONNX export) is built from scratch into a temporary
directory first, and that build is timed too.
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
# metric lines only: no fingerprint decides, the dense retriever must run
UNDECIDED_LOG = (
    "[rank0]:[2026-03-02 10:14:03] step 1200 | loss 2.3141 | lr 2.9e-4 | grad_norm 0.87\n"
    "[rank0]:[2026-03-02 10:14:09] step 1210 | loss nan | lr 2.9e-4 | grad_norm inf\n"
    "[rank0]:[2026-03-02 10:14:15] step 1220 | loss nan | lr 2.9e-4 | grad_norm nan\n"
)
QUESTION = "why does dcp.save hang at 64 GPUs?"
WARM_TEXTS = [
    QUESTION,
    "NCCL watchdog timeout at the first allreduce",
    "GPU runs out of memory when I increase the batch size",
    "training hangs after resuming from a checkpoint",
    "loss becomes nan after a few hundred steps in bf16",
    "vllm fails to start with not enough KV cache blocks",
]
ENCODERS = ("onnx", "torch")
TRAINDOC = str(Path(sys.executable).with_name("traindoc"))

WRAPPER = (
    "import resource, subprocess, sys, time, json\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], input=sys.stdin.read(), capture_output=True, text=True)\n"
    "dt = time.perf_counter() - t\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "rss, cpu = u.ru_maxrss / 1024, u.ru_utime + u.ru_stime\n"
    "print(json.dumps({'s': dt, 'cpu': cpu, 'rss': rss, 'rc': p.returncode, 'out': p.stdout, 'err': p.stderr[-500:]}))\n"
)

WARM = """
import json, resource, statistics, sys, time
from bot.diagnose import Engine
from bot.ingest import build_report
from bot.model import LogFile
texts, rounds = json.loads(sys.argv[1]), int(sys.argv[2])
engine = Engine.from_settings()
reports = [build_report([LogFile(name="<q>", text=t)]) for t in texts]
for r in reports:  # warm-up: session, index, caches
    engine.diagnose(r)
ms = []
for _ in range(rounds):
    for r in reports:
        t = time.perf_counter()
        engine.diagnose(r)
        ms.append((time.perf_counter() - t) * 1000)
ms.sort()
print(json.dumps({
    "encoder": type(engine.embedder).__name__,
    "p50_ms": statistics.median(ms), "p95_ms": ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))],
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "torch_loaded": "torch" in sys.modules,
}))
"""


def timed_run(args: list[str], env: dict[str, str], stdin: str | None = None) -> tuple[float, float, dict, float]:
    """Wall seconds, peak RSS (MB) of the child, its JSON output, and its CPU seconds (user+sys:
    less sensitive than wall time to other processes on a shared machine)."""
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args], check=False, input=stdin or "", capture_output=True, text=True, env=env
    )
    result = json.loads(proc.stdout)
    if result["rc"] != 0:
        raise SystemExit(f"{args}: exit {result['rc']}: {result['err']}")
    return result["s"], result["rss"], json.loads(result["out"]), result["cpu"]


def load_average() -> float:
    return round(os.getloadavg()[0], 1)


def cold(env: dict[str, str], repeats: int) -> dict[str, dict]:
    cases = {
        "ask": ([TRAINDOC, "ask", QUESTION, "--json"], None),
        "undecided": ([TRAINDOC, "diagnose", "-", "--json"], UNDECIDED_LOG),
        "decisive": ([TRAINDOC, "diagnose", "-", "--json"], DECISIVE_LOG),
    }
    runs: dict[tuple[str, str], list] = {}
    for _ in range(repeats):
        for case, (args, stdin) in cases.items():
            for encoder in ENCODERS:  # interleaved: load spikes hit both encoders
                runs.setdefault((case, encoder), []).append(
                    timed_run(args, {**env, "TRAINDOC_EMBEDDER": encoder}, stdin)
                )
    out: dict[str, dict] = {}
    for (case, encoder), results in runs.items():
        top = results[0][2]["results"][0]
        if case != "decisive" and not top["why"]["dense"]:
            raise SystemExit(f"{case}: the dense retriever did not run, the case measures nothing")
        out.setdefault(case, {})[encoder] = {
            "median_s": round(statistics.median(r[0] for r in results), 3),
            "median_cpu_s": round(statistics.median(r[3] for r in results), 3),
            "peak_rss_mb": round(max(r[1] for r in results), 1),
            "answer": top["id"],
        }
    for by_encoder in list(out.values()):
        by_encoder["torch/onnx"] = round(by_encoder["torch"]["median_s"] / by_encoder["onnx"]["median_s"], 2)
    # what embedding adds to a CLI call that never embeds (the decisive case), per encoder
    out["embedding_overhead"] = {
        e: round(out["ask"][e]["median_s"] / out["decisive"][e]["median_s"], 2) for e in ENCODERS
    }
    return out


def warm(env: dict[str, str], rounds: int) -> dict[str, dict]:
    texts = [*WARM_TEXTS, UNDECIDED_LOG]
    out = {}
    for encoder in ENCODERS:
        proc = subprocess.run(
            [sys.executable, "-c", WARM, json.dumps(texts), str(rounds)],
            check=True,
            capture_output=True,
            text=True,
            env={**env, "TRAINDOC_EMBEDDER": encoder},
        )
        out[encoder] = {k: round(v, 1) if isinstance(v, float) else v for k, v in json.loads(proc.stdout).items()}
    return out


def evaluate(env: dict[str, str], cases: Path, tmp: Path) -> dict[str, dict]:
    out = {}
    for encoder in ENCODERS:
        target = tmp / f"eval-{encoder}.json"
        subprocess.run(
            [TRAINDOC, "eval", str(cases), "--json", str(target)],
            check=True,
            capture_output=True,
            env={**env, "TRAINDOC_EMBEDDER": encoder},
        )
        figures = json.loads(target.read_text())
        out[encoder] = {
            r: {k: round(figures[r][k], 4) for k in ("top1", "top3", "mrr")} for r in ("hybrid", "dense")
        }
    out["identical_top1_top3"] = all(
        out["onnx"][r][k] == out["torch"][r][k] for r in ("hybrid", "dense") for k in ("top1", "top3")
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=10, help="warm rounds over the text set")
    parser.add_argument("--index-dir", type=Path, help="an index already built (default: build one now)")
    parser.add_argument("--eval", type=Path, help="eval case directory to compare the encoders on")
    args = parser.parse_args()
    record: dict = {"cores": os.cpu_count(), "load_before": load_average(), "repeats": args.repeats}
    with tempfile.TemporaryDirectory() as tmp:
        index_dir = args.index_dir or Path(tmp) / "index"
        env = {**os.environ, "TRAINDOC_INDEX_DIR": str(index_dir)}
        if args.index_dir is None:
            started = time.perf_counter()
            subprocess.run([TRAINDOC, "index", "build"], env=env, check=True, capture_output=True)
            record["index_build_s"] = round(time.perf_counter() - started, 2)
        record["cold"] = cold(env, args.repeats)
        record["warm"] = warm(env, args.rounds)
        if args.eval:
            record["eval"] = evaluate(env, args.eval, Path(tmp))
    record["load_after"] = load_average()
    emit(record, args.json)


if __name__ == "__main__":
    main()
