"""Benchmark what users run: `traindoc diagnose` on a job's per-rank logs, end to end, in a subprocess.

    python bench/triage.py                    # 64 x 10 MB rank files, then every prefix style
    python bench/triage.py --no-redact        # the same with secret redaction switched off
    python bench/triage.py --files 8 --phases # also time each phase in-process

Prints (or with --json, one JSON line of) the wall time, CPU time and peak RSS of the `traindoc
diagnose --json` process (CPU time says what a busy shared machine hides), whether its initiating rank is the culprit, and, per prefix style (kubectl
--timestamps/--prefix, torchrun --tee, srun --label, mpirun --tag-output, pdsh, Ray), whether the
initiating rank is right. Targets (issue 15): 64 x 10 MB in <= 10 s and <= 1 GB peak RSS.
With --phases: seconds and MB/s for reading, cleaning (ingest's normalize, redaction included),
triage, the fingerprint scan and the whole engine on the same files, and redaction's MB/s on a
sample of two files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.prefix_styles import STYLES, styled_job
from tests.fakes.scenarios import write_big_rank_file

CULPRIT = 17
REDACT_SAMPLE_FILES = 2
# The CLI with redaction swapped for the identity, to show what redaction costs.
NO_REDACT = (
    "import sys, bot.redact, bot.ingest, bot.diagnose\n"
    "same = lambda text: text\n"
    "for module in (bot.redact, bot.ingest, bot.diagnose):\n"
    "    if getattr(module, 'redact', None) is not None: module.redact = same\n"
    "from bot.cli import main\n"
    "sys.argv = ['traindoc', *sys.argv[1:]]\n"
    "main()\n"
)


def run_cli(paths: list[Path], *, redact: bool) -> dict:
    """`traindoc diagnose --json` on `paths` in a fresh process: seconds, its own peak RSS, the JSON."""
    code = ["-c", NO_REDACT] if not redact else ["-m", "bot.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *code, "diagnose", "--json", *map(str, paths)], stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # the child's own rusage: its peak RSS
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise SystemExit(f"traindoc diagnose failed ({proc.returncode}): {stderr.decode()[-2000:]}")
    return {"seconds": round(seconds, 2), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "json": json.loads(stdout)}


def write_rank_files(directory: Path, files: int, mb: int) -> list[Path]:
    paths = []
    for rank in range(files):
        path = directory / f"node{rank // 8 + 1:02d}" / f"rank{rank}.log"
        path.parent.mkdir(exist_ok=True)
        write_big_rank_file(path, rank, files, mb, culprit=min(CULPRIT, files - 1))
        paths.append(path)
    return paths


def initiating_rank(result: dict) -> int | None:
    init = (result["json"].get("triage") or {}).get("initiating") or {}
    return init.get("rank")


def phases(paths: list[Path]) -> dict:
    """Each stage of the pipeline on the same files, in this process."""
    from bot.diagnose import Engine
    from bot.ingest import build_report, decode, normalize
    from bot.redact import redact
    from bot.triage import triage

    out: dict[str, float] = {}
    mb = sum(p.stat().st_size for p in paths) / (1 << 20)

    def timed(name, fn):
        started = time.perf_counter()
        value = fn()
        out[f"{name}_s"] = round(time.perf_counter() - started, 2)
        out[f"{name}_mb_per_s"] = round(mb / max(out[f"{name}_s"], 1e-9), 1)
        return value

    raw = timed("read_decode", lambda: [(str(p), decode(p.read_bytes())) for p in paths])
    sample = raw[:REDACT_SAMPLE_FILES]  # redaction is timed on a sample: it can take minutes per 100 MB
    sample_mb = sum(len(text) for _, text in sample) / (1 << 20)
    started = time.perf_counter()
    for _, text in sample:
        redact(text)
    out["redact_sample_mb"] = round(sample_mb, 1)
    out["redact_mb_per_s"] = round(sample_mb / (time.perf_counter() - started), 2)
    from bot.model import LogFile

    files = timed("normalize", lambda: [LogFile(name=name, text=normalize(text)) for name, text in raw])
    report = build_report(files)
    timed("triage", lambda: triage(report.files))
    engine = Engine.from_settings()
    timed("fingerprints", lambda: engine.fingerprints.scan_files([f.text for f in report.files]))
    engine.ensure_index()
    timed("engine_diagnose", lambda: engine.diagnose(report))
    return {"mb": round(mb, 1), **out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=64)
    parser.add_argument("--mb", type=int, default=10, help="size of each rank file")
    parser.add_argument("--no-redact", action="store_true", help="switch secret redaction off (what it costs)")
    parser.add_argument("--phases", action="store_true", help="also time each stage in-process")
    parser.add_argument("--skip-styles", action="store_true")
    parser.add_argument("--style-pad", type=int, default=2000, help="step lines per rank in the style runs")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    record: dict = {"files": args.files, "redaction": not args.no_redact}
    with tempfile.TemporaryDirectory(prefix="traindoc-bench-") as tmp:
        paths = write_rank_files(Path(tmp), args.files, args.mb)
        record["mb"] = round(sum(p.stat().st_size for p in paths) / (1 << 20), 1)
        result = run_cli(paths, redact=not args.no_redact)
        record.update(seconds=result["seconds"], cpu_seconds=result["cpu_seconds"], peak_rss_mb=result["peak_rss_mb"],
                      mb_per_s=round(record["mb"] / result["seconds"], 1),
                      initiating_rank=initiating_rank(result), culprit=min(CULPRIT, args.files - 1),
                      verdict=result["json"]["verdict"],
                      top=(result["json"]["results"] or [{}])[0].get("id"))
        record["initiating_right"] = record["initiating_rank"] == record["culprit"]
        if args.phases:
            record["phases"] = phases(paths)
    if not args.skip_styles:
        styles = {}
        for style in STYLES:
            with tempfile.TemporaryDirectory(prefix=f"traindoc-{style}-") as tmp:
                files = styled_job(style, world=16, per_node=8, culprit=11, pad=args.style_pad)
                style_paths = []
                for f in files:
                    path = Path(tmp) / f.name
                    path.write_text(f.text)
                    style_paths.append(path)
                mb = sum(p.stat().st_size for p in style_paths) / (1 << 20)
                result = run_cli(style_paths, redact=not args.no_redact)
                styles[style] = {"files": len(style_paths), "mb": round(mb, 1), "seconds": result["seconds"],
                                 "cpu_seconds": result["cpu_seconds"],
                                 "initiating_rank": initiating_rank(result), "right": initiating_rank(result) == 11}
        record["styles"] = styles
        record["styles_right"] = sum(s["right"] for s in styles.values())
    if args.json:
        print(json.dumps(record))
        return
    for key, value in record.items():
        if key == "styles":
            for style, figures in value.items():
                print(f"{'style ' + style:>28}: {figures}")
        elif key == "phases":
            for name, figure in value.items():
                print(f"{'phase ' + name:>28}: {figure}")
        else:
            print(f"{key:>28}: {value}")


if __name__ == "__main__":
    main()
