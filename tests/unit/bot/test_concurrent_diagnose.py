"""Concurrent diagnoses share one engine (and its Hyperscan databases): 8 threads on 1 MB logs at
once, 0 failures, each answer the same as alone."""

from __future__ import annotations

import threading

from bot.ingest import report_from_text

NOISE = "[rank{r}]: step {n} loss 1.2345 lr 3.0e-04 grad_norm 0.512 tokens/s 51234\n"
FAILURE = "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered\n"


def _log(seed: int) -> str:
    lines = [NOISE.format(r=(seed + i) % 8, n=i) for i in range(14_000)]  # ~1 MB
    lines.insert(7_000 + seed, FAILURE)
    return "".join(lines)


def test_eight_threads_diagnose_one_megabyte_logs_at_once(fixture_engine):
    reports = [report_from_text(_log(seed)) for seed in range(8)]
    expected = [fixture_engine.diagnose(r).to_json()["results"] for r in reports]
    barrier = threading.Barrier(8)
    outcomes: dict[int, object] = {}

    def work(i: int) -> None:
        barrier.wait()
        try:
            for _ in range(2):
                got = fixture_engine.diagnose(reports[i]).to_json()["results"]
                assert got == expected[i]
            outcomes[i] = "ok"
        except Exception as exc:  # noqa: BLE001 - recorded and asserted below
            outcomes[i] = exc

    _run_in_threads(work, 8)
    assert outcomes == dict.fromkeys(range(8), "ok")


def test_eight_threads_scan_one_megabyte_at_once():
    """The scanner itself: Hyperscan releases the GIL while scanning, so a shared scratch would fail
    with "scratch in use"; each thread gets its own."""
    from index.scanner import MultiScanner

    scanner = MultiScanner([r"illegal memory access", r"step \d+ loss", r"rank[0-7]"])
    data = _log(0).encode()
    expected = len(scanner.scan_offsets(data))
    barrier = threading.Barrier(8)
    outcomes: dict[int, object] = {}

    def work(i: int) -> None:
        barrier.wait()
        try:
            counts = {len(scanner.scan_offsets(data)) for _ in range(10)}
            outcomes[i] = "ok" if counts == {expected} else counts
        except Exception as exc:  # noqa: BLE001 - recorded and asserted below
            outcomes[i] = exc

    _run_in_threads(work, 8)
    assert outcomes == dict.fromkeys(range(8), "ok")


def _run_in_threads(work, n: int) -> None:
    """work(0) ... work(n-1), each in its own thread, all joined."""
    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
