"""The focus text: the initiator's own lines (its traceback, its kernel lines), prefixes stripped,
so retrieval matches its failure and not the collateral timeouts the other ranks printed."""

from __future__ import annotations

from bot.kinds import INFERRED
from bot.triage.attribute import resolve
from bot.triage.fields import who
from bot.triage.job import Job, Suspect
from bot.triage.scan import Event
from index.sources import same_node

FOCUS_BEFORE = 50
FOCUS_AFTER = 30
FOCUS_MAX_LINES = 80
CONTEXT_BYTES = 192 << 10


def first_timeout_event(job: Job, majority: tuple[str, int] | None) -> Event:
    events = [e for st in job.ranks.values() for e in st.collateral if e.kind == "watchdog-timeout"]
    events = events or [e for st in job.ranks.values() for e in st.collateral] or job.unranked
    return min(events, key=lambda e: (e.file, e.line))


Located = tuple[tuple[int, int], str]  # ((file index, line in that file), message)


def focus_text(
    job: Job,
    sources: list,
    initiator: Suspect | None,
    failing: list[Suspect],
    majority: tuple[str, int] | None,
) -> tuple[str, tuple[tuple[str, int], ...]]:
    """The focus text and, for each of its lines, the (file, line) it was taken from."""
    blocks: list[list[Located]] = []
    if initiator is not None:
        e = initiator.event
        if initiator.kind == "xid":
            blocks.append([_located(x) for x in _node_lines(job, e)])
            st = job.ranks.get(initiator.rank) if initiator.rank is not None else None
            others = [x for x in (st.roots if st else []) if x.kind != "xid"]
            if others:
                blocks.append(_block(job, sources, others[0], FOCUS_BEFORE // 2, FOCUS_AFTER // 2))
        elif initiator.kind in INFERRED:
            if e.kind == "activity":
                blocks.append(_block(job, sources, e, 12, 12))
            elif initiator.kind == "desync":
                blocks.append(_block(job, sources, e, 0, 8))
            desync = [
                x
                for x in job.unranked + [y for st in job.ranks.values() for y in st.collateral]
                if x.kind == "desync"
            ]
            if desync:
                blocks.append([_located(x) for x in desync[:6]])
            if majority is not None:
                t = first_timeout_event(job, majority)
                if t is not e:
                    blocks.append(_block(job, sources, t, 0, 4))
        else:
            blocks.append(_block(job, sources, e, FOCUS_BEFORE, FOCUS_AFTER))
    elif failing:
        blocks.append(_block(job, sources, failing[0].event, FOCUS_BEFORE, FOCUS_AFTER))
    elif majority is not None:
        blocks.append(_block(job, sources, first_timeout_event(job, majority), 4, 8))
    lines: list[Located] = []
    for block in blocks:
        for where, line in block:
            if len(lines) >= FOCUS_MAX_LINES:
                break
            lines.append((where, line.rstrip()))
    while lines and not lines[0][1]:
        lines.pop(0)
    while lines and not lines[-1][1]:
        lines.pop()
    origins = tuple((job.scans[file].name, line) for (file, line), _ in lines)
    return "\n".join(message for _, message in lines), origins


def _located(e: Event) -> Located:
    return (e.file, e.line), e.prefix.message


def _node_lines(job: Job, e: Event) -> list[Event]:
    node = job.node_of(e)
    same = [
        x
        for x in job.node_events + [y for st in job.ranks.values() for y in st.roots]
        if x.kind == "xid" and (same_node(job.node_of(x), node) or job.node_of(x) == node)
    ]
    uniq = {(x.file, x.line): x for x in same}
    return sorted(uniq.values(), key=lambda x: (x.file, x.line))[:4] or [e]


def _block(job: Job, sources: list, e: Event, before: int, after: int) -> list[Located]:
    """The event's rank's own lines around it, prefixes stripped: the traceback that ends in it (or
    `before` lines of context) and up to `after` lines that follow."""
    start = max(0, e.offset - CONTEXT_BYTES)
    data = sources[e.file].read(start, e.offset - start + CONTEXT_BYTES // 2)
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    skip = 1 if start > 0 else 0  # a partial first line
    index = data[: e.offset - start].count(b"\n")
    own = resolve(job, e)
    owned: list[tuple[int, str]] = []  # (line index, message) of this rank's lines
    # a file of one rank: every line is its own
    single = e.file in job.file_rank or e.file in job.file_local
    current = single or own is None
    lo, hi = (
        (max(skip, index - before), min(len(lines), index + after + 1))
        if single
        else (skip, len(lines))
    )
    for i in range(lo, hi):
        p = who(lines[i])
        if (
            p.rank is not None
            or p.local_rank is not None
            or p.pid is not None
            or p.pg_rank is not None
        ):
            rank = resolve(job, Event(e.file, 0, 0, "", "", "", False, ("",), p))
            if rank is not None:
                current = rank == own
        message = p.message
        if current or i == index:
            owned.append((i, message))
    pos = next((k for k, (i, _) in enumerate(owned) if i == index), None)
    if pos is None:
        return [_located(e)]
    head = owned[max(0, pos - before) : pos]
    tb = max(
        (k for k, (_, m) in enumerate(head) if "Traceback (most recent call last)" in m),
        default=None,
    )
    head = head[tb:] if tb is not None else head[-min(len(head), 3) :]
    tail = owned[pos + 1 : pos + 1 + after]
    first = e.line - index  # the file's line number of lines[0]
    return [((e.file, first + i), m) for i, m in head + [owned[pos]] + tail]
