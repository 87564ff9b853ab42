"""A small, fast stand-in for bot.diagnose.Engine over real KB entries (fingerprint regexes only).

Used by unit and scenario tests; the e2e tests use the real engine once it exists.
"""

from __future__ import annotations

import functools
import re
import time

from bot.model import Candidate, Diagnosis, FingerprintHit, Report, Why
from kb.load import BUNDLED_ENTRIES, entry_files, load_entry
from kb.schema import Entry

BOOM = "TRAINDOC_TEST_BOOM"  # a report containing this makes the fake engine raise
LEAKY_SECRET = "xoxb-111111111-leaked-in-an-exception"  # quoted by that exception: logs must redact it


@functools.lru_cache(maxsize=1)
def valid_entries() -> tuple[Entry, ...]:
    """Every bundled entry that loads (the KB is edited concurrently; a broken file must not break Slack tests)."""
    out = []
    for path in entry_files(BUNDLED_ENTRIES):
        try:
            out.append(load_entry(path))
        except Exception:  # noqa: BLE001, S112 - skip an entry someone is still writing
            continue
    return tuple(out)


class FakeEngine:
    def __init__(self, entries: tuple[Entry, ...] | None = None, *, delay_s: float = 0.0):
        self._entries = entries if entries is not None else valid_entries()
        self._by_id = {e.id: e for e in self._entries}
        self.delay_s = delay_s
        self.calls: list[Report] = []
        self.completed = 0  # diagnoses returned: lets tests wait until a listener is past the engine

    def entries(self) -> tuple[Entry, ...]:
        return self._entries

    def entry(self, entry_id: str) -> Entry | None:
        return self._by_id.get(entry_id)

    def diagnose(self, report: Report) -> Diagnosis:
        started = time.perf_counter()
        self.calls.append(report)
        if BOOM in report.text:
            raise RuntimeError(f"engine exploded on purpose ({LEAKY_SECRET})")
        if self.delay_s:
            time.sleep(self.delay_s)
        lines = report.text.splitlines()
        scored: list[tuple[float, Entry, tuple[FingerprintHit, ...]]] = []
        words = set(re.findall(r"[a-z]{4,}", report.text.lower()))
        for entry in self._entries:
            hits = tuple(
                FingerprintHit(pattern=fp.pattern, line=n, text=line, strength=fp.strength)
                for fp in entry.fingerprints
                for n, line in enumerate(lines, 1)
                if re.search(fp.pattern, line)
            )
            strong = sum(h.strength == "strong" for h in hits)
            overlap = len(words & set(re.findall(r"[a-z]{4,}", (entry.title + " " + entry.summary).lower())))
            scored.append((strong * 1.0 + (len(hits) - strong) * 0.3 + overlap * 0.01, entry, hits))
        scored.sort(key=lambda t: (-t[0], t[1].id))
        results = tuple(
            Candidate(
                id=e.id,
                title=e.title,
                score=s,
                confidence=min(0.95, 0.55 + 0.2 * s) if any(h.strength == "strong" for h in hits) else min(0.3, s),
                why=Why(fingerprints=hits, lexical=min(1.0, s / 2), dense=0.5),
                entry=e,
            )
            for s, e, hits in scored[:5]
        )
        best = results[0] if results else None
        match = best is not None and any(h.strength == "strong" for h in best.why.fingerprints)
        self.completed += 1
        return Diagnosis(
            verdict="match" if match else "abstain",
            confidence=best.confidence if best else 0.0,
            results=results,
            kind=report.kind,
            elapsed_ms=(time.perf_counter() - started) * 1000,
            abstain_reason="" if match else "no strong fingerprint matched",
        )
