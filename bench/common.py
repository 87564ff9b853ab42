"""Helpers shared by the benchmarks: peak RSS, medians, one JSON line out."""

from __future__ import annotations

import json
import resource
import statistics
import sys
import time
from collections.abc import Callable


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def emit(record: dict, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(record) + "\n")
    else:
        for key, value in record.items():
            print(f"{key:>18}: {value}")
