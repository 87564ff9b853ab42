"""Rank-aware triage: which rank failed first, and which ranks only failed because of it.

On a 64-GPU job one rank dies (OOM, Xid, a data-loader crash) and the other 63 print NCCL watchdog
timeouts minutes later; the loudest lines are the wrong answer. `triage` reads every file once
(scan, census), gives each classified line its rank and node (job, attribute), and decides
(verdict), with the words in summary and the initiator's own lines in focus.

Line numbers are 1-based lines of the file they are in; `Initiating.file` names it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from bot.model import LogFile, Triage
from bot.triage.attribute import attribute
from bot.triage.job import Job, learn_maps
from bot.triage.rules import line_scanner
from bot.triage.scan import CHUNK_BYTES, Buffers, FileScan, chunks_of_bytes, scan_file
from bot.triage.verdict import verdict
from index.sources import parse_source_name

__all__ = ["triage"]

SCAN_THREADS = max(1, min(2, os.cpu_count() or 1))


class TextSource:
    """One input text, encoded once while it is scanned and again only for the few context reads."""

    def __init__(self, log: LogFile, chunk_bytes: int = CHUNK_BYTES):
        self.name = log.name
        self._text = log.text
        self._chunk_bytes = chunk_bytes

    def chunks(self) -> Iterator[memoryview]:
        yield from chunks_of_bytes(self._text.encode("utf-8", "replace"), self._chunk_bytes)

    def read(self, offset: int, length: int) -> bytes:
        return self._text.encode("utf-8", "replace")[offset : offset + length]


def triage(files: Sequence[LogFile], *, chunk_bytes: int = CHUNK_BYTES) -> Triage | None:
    """Triage the input texts (scanned `chunk_bytes` at a time, in bounded memory); None when they
    carry no rank or node structure at all."""
    sources = [TextSource(f, chunk_bytes) for f in files]
    job = Job(scans=_scan_all(sources))
    learn_maps(job)
    attribute(job)
    if not job.seen and not job.node_events:
        return None
    return verdict(job, sources)


def _scan_all(sources: list[TextSource]) -> list[FileScan]:
    """Scan the files on SCAN_THREADS threads: encoding, Hyperscan and numpy release the GIL."""
    line_scanner()  # compile once, before the threads need it
    local = threading.local()

    def scan_one(item: tuple[int, TextSource]) -> FileScan:
        index, source = item
        if not hasattr(local, "buffers"):
            local.buffers = Buffers()
        # A file whose name carries its rank needs no census of the prefixes in it.
        needed = parse_source_name(source.name).rank is None
        return scan_file(
            index, source.name, source.chunks(), census_needed=needed, buffers=local.buffers
        )

    if len(sources) < 2:
        return [scan_one(item) for item in enumerate(sources)]
    with ThreadPoolExecutor(max_workers=SCAN_THREADS) as pool:
        return list(pool.map(scan_one, enumerate(sources)))
