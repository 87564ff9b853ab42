"""Secret redaction throughput: bot.redact over a generated training log (median MB/s).

Two mixes: `typical` (launcher, NCCL, metrics and traceback lines with a secret every ~2,000
lines) and `dense` (one line in five looks like NAME=value and must be checked: a worst case for
the per-line pass). Also the time on one 40,000-character line and a 1 MB single-line body (the
inputs that were quadratic before), which must stay linear.

    python bench/redact.py [--json] [--mb 50]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import emit, median_seconds, peak_rss_mb
from bot.redact import MASK, redact

NOISE = [
    "[rank{r}]:[I1202 03:{m:02d}:{s:02d}.{us:06d} {pid} torch/distributed/run.py:{n}] step {n} loss {l:.4f} lr 3.0e-04",
    "node{r:02d}:{pid}:{pid} [{d}] NCCL INFO Channel {c:02d}/0 : {r}[{d}] -> {q}[{d}] via P2P/IPC",
    "{{'loss': {l:.4f}, 'grad_norm': {l:.3f}, 'learning_rate': 2e-05, 'epoch': 0.{n}, 'num_tokens': {pid}}}",
    '  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line {n}, in _call_impl',
    "INFO 12-02 03:{m:02d}:{s:02d} [metrics.py:{n}] Avg prompt throughput: {l:.1f} tokens/s, Running: {d} reqs",
    "[rank{r}]:[W1202 03:{m:02d}:{s:02d}.{us:06d} ProcessGroupNCCL.cpp:1234] Watchdog caught collective operation timeout",
]
SECRETS = [
    "export HF_TOKEN=hf_{k}",
    "wandb: Currently logged in as: alice; WANDB_API_KEY=0123456789abcdef0123456789abcdef{h}",
    "Connecting to postgres://trainer:{k}@db.internal:5432/runs",
    "headers={{'Authorization': 'Bearer {k}'}}",
]
DENSE = "Step {n}: train/loss={l:.3f} eval/accuracy=0.87 tokens_per_sec=12345.6 cache_key=step_{n}"


def generate(mb: int, *, dense: bool, seed: int = 7) -> str:
    rnd = random.Random(seed)
    lines, size, target = [], 0, mb << 20
    while size < target:
        if rnd.random() < 0.0005:
            line = rnd.choice(SECRETS).format(k="".join(rnd.choices("abcdefghijkLMNOP0123456789", k=34)), h="01234567")
        elif dense and rnd.random() < 0.2:
            line = DENSE.format(n=rnd.randrange(10**5), l=rnd.random())
        else:
            line = rnd.choice(NOISE).format(
                r=rnd.randrange(64),
                m=rnd.randrange(60),
                s=rnd.randrange(60),
                us=rnd.randrange(10**6),
                pid=rnd.randrange(10**5),
                n=rnd.randrange(3000),
                l=rnd.random() * 4,
                d=rnd.randrange(8),
                c=rnd.randrange(32),
                q=rnd.randrange(64),
            )
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    started = time.perf_counter()
    redact("warm-up password=hunter2")  # compile the rule set once
    compile_s = time.perf_counter() - started
    record: dict[str, object] = {"rules_compile_s": round(compile_s, 2), "mb": args.mb}
    for mix in ("typical", "dense"):
        text = generate(args.mb, dense=mix == "dense")
        seconds = median_seconds(lambda text=text: redact(text), args.repeats)
        record[f"{mix}_mb_per_s"] = round(len(text.encode()) / (1 << 20) / seconds, 1)
        record[f"{mix}_masks"] = redact(text).count(MASK)
    long_line = "x=" + "password " * 4500  # 40k characters on one line
    record["line_40k_ms"] = round(median_seconds(lambda: redact(long_line), args.repeats) * 1000, 1)
    body = "a" * (900 << 10) + " token: " + "b" * 100
    record["body_900k_ms"] = round(median_seconds(lambda: redact(body), args.repeats) * 1000, 1)
    record["peak_rss_mb"] = round(peak_rss_mb(), 1)
    emit(record, args.json)


if __name__ == "__main__":
    main()
