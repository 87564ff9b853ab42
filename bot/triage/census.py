"""The rank census: which rank prefixes occur in a file ("[rank17]:", "[default3]:", srun's
"12: ", mpirun's "[1,12]<stdout>:"), found by one literal Hyperscan pass per chunk rather than by
parsing lines.

"[rankN]:" and "[defaultN]:" are counted wherever they occur, so they are found behind other
prefixes too (kubectl --timestamps and --prefix, pdsh, Ray); srun labels only at a line start,
padded as srun pads them ("%*d: ").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from bot.settings import hyperscan_cache_dir
from bot.triage.fields import who
from index.scanner import load_or_build

try:  # optional accelerator, as in index.scanner
    import hyperscan
except ImportError:  # pragma: no cover
    hyperscan = None  # type: ignore[assignment]

CENSUS_RANKS = 1024  # prefix literals compiled for ranks below this; larger ranks via a regex

_FORMATS = (b"[rank%d]:", b"[default%d]:", b"\n%d: ", b"\n %d: ", b"\n  %d: ", b"\n   %d: ")
_KIND = ("rank", "local", "label", "label", "label", "label")
# Ranks past the literal table, and mpirun --tag-output ("[1,12]<stdout>:"), by regex when present.
_BIG_RANK = re.compile(
    rb"\[rank(\d{4,7})\]:|\[default(\d{4,7})\]:|\[\d{1,10},(\d{1,7})\]<std(?:out|err)>:"
)
_FALLBACK = re.compile(
    rb"\[(rank|default)(\d{1,7})\]:|\n {0,3}(\d{1,7}): |\[\d{1,10},(\d{1,7})\]<std(?:out|err)>:"
)


@dataclass
class Census:
    ranks: set[int] = field(default_factory=set)  # global ranks seen in line prefixes
    local_ranks: set[int] = field(default_factory=set)  # "[default3]:" prefixes
    # srun --label "12: " (trusted only if several)
    label_ranks: set[int] = field(default_factory=set)

    def add(self, kind: str, rank: int) -> None:
        if kind == "rank":
            self.ranks.add(rank)
        elif kind == "local":
            self.local_ranks.add(rank)
        else:
            self.label_ranks.add(rank)


@cache
def _big_rank_db() -> Any:
    """Presence test for the prefixes the literal table does not cover (one report per chunk)."""
    if hyperscan is None:
        return None
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(
        expressions=[rb"\[(?:rank|default)\d{4,7}\]:", rb",\d+\]<std(?:out|err)>:"],
        ids=[0, 1],
        flags=hyperscan.HS_FLAG_SINGLEMATCH,
    )
    return db


@cache
def _literal_db() -> Any:
    if hyperscan is None:
        return None
    literals = [fmt % r for r in range(CENSUS_RANKS) for fmt in _FORMATS]

    def build() -> Any:
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(
            expressions=literals,
            ids=list(range(len(literals))),
            flags=hyperscan.HS_FLAG_SINGLEMATCH,
            literal=True,
        )
        return db

    # thousands of literals: a fifth of a second to compile on every start, milliseconds to load
    return load_or_build(hyperscan_cache_dir(), b"census-literals\0" + b"\0".join(literals), build)


def new_scratch() -> tuple:
    """Hyperscan scratch for one thread's census scans."""
    db, big = _literal_db(), _big_rank_db()
    return (
        hyperscan.Scratch(db) if db is not None else None,
        hyperscan.Scratch(big) if big is not None else None,
    )


def census(chunk: memoryview, into: Census, scratch: tuple) -> None:
    """Record the distinct rank prefixes in `chunk`."""
    db = _literal_db()
    literal_scratch, big_scratch = scratch
    if db is None:  # pragma: no cover - RE2-only installs
        for m in _FALLBACK.finditer(chunk):
            if m.group(1):
                into.add("rank" if m.group(1) == b"rank" else "local", int(m.group(2)))
            else:
                into.add("label" if m.group(3) else "rank", int(m.group(3) or m.group(4)))
        return
    found: list[int] = []
    db.scan(
        chunk,
        match_event_handler=lambda pid, _f, _t, _fl, _c: found.append(pid),
        scratch=literal_scratch,
    )
    for pid in found:
        rank, fmt = divmod(pid, len(_FORMATS))
        into.add(_KIND[fmt], rank)
    present: list[int] = []
    _big_rank_db().scan(
        chunk,
        match_event_handler=lambda pid, _f, _t, _fl, _c: present.append(pid),
        scratch=big_scratch,
    )
    if present:
        for m in _BIG_RANK.finditer(chunk):
            if m.group(2):
                into.local_ranks.add(int(m.group(2)))
            else:
                into.ranks.add(int(m.group(1) or m.group(3)))


def census_first_line(line: str, into: Census) -> None:
    """A chunk's first line has no newline before it: read its prefix (a bare "12: " is too
    weak)."""
    if not line.startswith(("[", "(")):
        return
    w = who(line)
    if w.rank is not None:
        into.ranks.add(w.rank)
    elif w.local_rank is not None:
        into.local_ranks.add(w.local_rank)
