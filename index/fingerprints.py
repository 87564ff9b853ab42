"""All KB fingerprints (and requires/excludes gates) compiled into one scanner; per-entry
evidence."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from index.scanner import Match, MultiScanner
from kb.schema import Entry

STRONG = 1.0
SUPPORTING = 0.35
EXTRA_MATCH_BONUS = 0.15  # each further distinct pattern: specific entries beat their hub
MAX_BONUS = 0.45

Strength = Literal["strong", "supporting"]


@dataclass(frozen=True)
class Hit:
    pattern: str
    line: int
    strength: Strength


@dataclass
class EntryEvidence:
    hits: list[Hit] = field(default_factory=list)
    requires_met: int = 0
    requires_total: int = 0
    excluded: bool = False

    @property
    def gated_out(self) -> bool:
        return self.excluded or self.requires_met < self.requires_total

    @property
    def strong(self) -> bool:
        return not self.gated_out and any(h.strength == "strong" for h in self.hits)

    @property
    def score(self) -> float:
        if self.gated_out or not self.hits:
            return 0.0
        base = STRONG if self.strong else SUPPORTING
        distinct = len({h.pattern for h in self.hits}) + self.requires_met
        return base + min(MAX_BONUS, EXTRA_MATCH_BONUS * (distinct - 1))


@dataclass(frozen=True)
class _Use:
    entry: int
    role: str  # "fingerprint" | "requires" | "excludes"
    strength: Strength = "strong"


class FingerprintIndex:
    """Scan once, attribute each matched pattern to every entry that uses it."""

    def __init__(
        self, entries: Sequence[Entry], *, force_re2: bool = False, cache_dir: Path | None = None
    ):
        self.entries = list(entries)
        uses: dict[str, list[_Use]] = defaultdict(list)
        for i, entry in enumerate(self.entries):
            for fp in entry.fingerprints:
                uses[fp.pattern].append(_Use(i, "fingerprint", fp.strength))
            for pattern in entry.requires:
                uses[pattern].append(_Use(i, "requires"))
            for pattern in entry.excludes:
                uses[pattern].append(_Use(i, "excludes"))
        self.patterns = list(uses)
        self._uses = [uses[p] for p in self.patterns]
        self.scanner = MultiScanner(self.patterns, force_re2=force_re2, cache_dir=cache_dir)

    def scan(self, text: str | bytes) -> dict[int, EntryEvidence]:
        """Evidence per entry index, for entries that any pattern touched."""
        return self._evidence(self.scanner.scan(text, first_only=True))

    def scan_files(self, texts: Sequence[str]) -> dict[int, EntryEvidence]:
        """The same as `scan("\\n".join(texts))`, with the same line numbers, without building the
        joined text: each text is scanned alone and its lines are counted on from the previous."""
        first: dict[int, int] = {}  # pattern -> its first line in the joined numbering
        base = 0
        for text in texts:
            for match in self.scanner.scan(text, first_only=True):
                first.setdefault(match.pattern, base + match.line)
            base += text.count("\n") + 1
        return self._evidence(
            [Match(p, line) for p, line in sorted(first.items(), key=lambda x: (x[1], x[0]))]
        )

    def _evidence(self, matches: Sequence[Match]) -> dict[int, EntryEvidence]:
        evidence: dict[int, EntryEvidence] = {}
        for i, entry in enumerate(self.entries):
            if entry.requires:
                evidence[i] = EntryEvidence(requires_total=len(entry.requires))
        for match in matches:
            pattern = self.patterns[match.pattern]
            for use in self._uses[match.pattern]:
                ev = evidence.setdefault(
                    use.entry, EntryEvidence(requires_total=len(self.entries[use.entry].requires))
                )
                if use.role == "fingerprint":
                    ev.hits.append(Hit(pattern, match.line, use.strength))
                elif use.role == "requires":
                    ev.requires_met += 1
                else:
                    ev.excluded = True
        return {i: ev for i, ev in evidence.items() if ev.hits or ev.excluded}
