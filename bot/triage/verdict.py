"""The verdict: which rank failed first, and which ranks only failed because of it.

1. a rank with a root-type error of its own is the initiator; when several have one, the earliest
   by timestamp (a clear gap), a hardware error (Xid/ECC) over its software echoes, or torchrun's
   "first observed failure" decides; ranks failing together with no gap mean no single initiator;
2. with only collateral errors, what the software says decides: a desync report naming a rank, the
   one rank waiting in a different collective (SeqNum/OpType), or the one rank that never reached
   the collective everybody else timed out in (busy saving a checkpoint, say).
"""

from __future__ import annotations

from collections import Counter

from bot.kinds import COLLATERAL_ORDER, HARDWARE, ROOT_PHRASE
from bot.model import CollateralGroup, Initiating, Triage
from bot.triage.fields import DESYNC_RANKS, ELASTIC_RANK
from bot.triage.focus import first_timeout_event, focus_text
from bot.triage.job import Job, Suspect
from bot.triage.rules import rule_regex
from bot.triage.scan import Event
from bot.triage.summary import summary
from index.query_text import clip_around

SIMULTANEOUS_S = 1.0  # root errors closer than this on different ranks: no single initiator


def verdict(job: Job, sources: list) -> Triage:
    """The Triage of an attributed job: initiator, collateral groups, summary and focus text."""
    candidates = _root_candidates(job)
    initiator, reason, no_single = _pick_root(job, candidates)
    failing: list[Suspect] = []
    majority = _majority_timeout(job)
    if initiator is None and not candidates:
        initiator, reason = _pick_from_collateral(job, majority)
        no_single = initiator is None
    elif initiator is None:
        failing = candidates
    else:
        failing = [c for c in candidates if c.rank != initiator.rank and c.rank is not None]
    failing_ranks = {c.rank for c in failing if c.rank is not None}
    init_rank = initiator.rank if initiator else None
    groups = _collateral_groups(job, exclude=failing_ranks | {init_rank})
    collateral = tuple(sorted(r for g in groups for r in g.ranks))
    silent = _silent_ranks(job)
    failing_groups = _failing_groups(failing)
    initiating = None
    if initiator is not None:
        e = initiator.event
        initiating = Initiating(
            rank=initiator.rank,
            node=initiator.node,
            line=e.line,
            text=_clipped_message(e),
            file=job.scans[e.file].name,
            kind=initiator.kind,
            timestamp=e.ts[1] if e.ts else None,
            reason=reason,
        )
    timeouts = {r: st.timeout for r, st in job.ranks.items() if st.timeout}
    words = summary(initiator, initiating, groups, failing, silent, majority, no_single, timeouts)
    # One rank's log is all its own lines: retrieval keeps the whole text.
    focus, origins = (
        focus_text(job, sources, initiator, failing, majority) if len(job.seen) > 1 else ("", ())
    )
    return Triage(
        initiating=initiating,
        no_single_initiator=no_single,
        collateral_ranks=collateral,
        collateral_groups=tuple(groups),
        failing_groups=failing_groups,
        silent_ranks=silent,
        ranks_seen=len(job.seen),
        world_size=job.world,
        versions=dict(sorted(job.versions.items())),
        focus_text=focus,
        focus_origins=origins,
        summary=words,
    )


def _root_candidates(job: Job) -> list[Suspect]:
    out = []
    for st in job.ranks.values():
        e = st.first_root()
        if e is not None:
            out.append(Suspect(st.rank, st.node, e, e.kind))
    for e in job.node_events:
        out.append(Suspect(None, job.node_of(e), e, e.kind))
    strong = [c for c in out if c.event.strong]
    return sorted(
        strong or out,
        key=lambda c: (c.event.ts[0] if c.event.ts else float("inf"), c.event.file, c.event.line),
    )


def _pick_root(job: Job, cands: list[Suspect]) -> tuple[Suspect | None, str, bool]:
    if not cands:
        return None, "", False
    if len(cands) == 1:
        return cands[0], "the only rank with a root-type error", False
    all_timed = all(c.event.ts for c in cands)
    first, second = cands[0].event.ts, cands[1].event.ts
    if all_timed and first and second and second[0] - first[0] >= SIMULTANEOUS_S:
        return cands[0], f"earliest root-type error ({first[1]})", False
    hardware = [c for c in cands if c.kind in HARDWARE]
    if len({(c.rank, c.node) for c in hardware}) == 1:
        return hardware[0], "hardware error; the other errors follow from it", False
    if all_timed:  # several ranks failed within a second of each other: nobody was first
        return None, "", True
    named = {r for r in _elastic_root_causes(job)} & {c.rank for c in cands}
    if len(named) == 1:
        rank = named.pop()
        return next(c for c in cands if c.rank == rank), "torchrun's first observed failure", False
    return None, "", True


def _elastic_root_causes(job: Job) -> list[int]:
    """Ranks torchrun lists under "Root Cause (first observed failure)" (the rank line follows
    it)."""
    out = []
    for scan in job.scans:
        headers = [e.line for e in scan.events if "elastic-root" in e.rules]
        for e in scan.events:
            near_header = any(0 < e.line - h <= 4 for h in headers)
            if "elastic-rank" in e.rules and near_header and (m := ELASTIC_RANK.search(e.text)):
                out.append(int(m.group(1)))
    return out


def _majority_timeout(job: Job) -> tuple[str, int] | None:
    counts = Counter(st.timeout for st in job.ranks.values() if st.timeout)
    if not counts:
        return None
    return counts.most_common(1)[0][0]


def _pick_from_collateral(job: Job, majority: tuple[str, int] | None) -> tuple[Suspect | None, str]:
    named = _desync_named(job)
    if len(named) == 1:
        rank, e = next(iter(named.items()))
        st = job.ranks.get(rank)
        return Suspect(
            rank, st.node if st else job.rank_node.get(rank), e, "desync"
        ), "named by the NCCL desync report"
    timed = {r: st for r, st in job.ranks.items() if st.timeout}
    if majority is None or len(timed) < 2:
        return None, ""
    seq = majority[1]
    odd: dict[int, str] = {}
    for r, st in timed.items():
        if st.timeout is not None and st.timeout != majority and st.timeout[0] and majority[0]:
            odd[r] = "desync"
        elif st.enqueued is not None and st.enqueued < seq:
            odd[r] = "stalled"
    if len(timed) * 2 >= len(job.seen):
        for r in job.seen - set(timed):
            odd.setdefault(r, "stalled")
    if len(odd) != 1:
        silent = _silent_ranks(job)
        if not odd and len(silent) == 1:
            rank = silent[0]
            e = first_timeout_event(job, majority)
            return Suspect(
                rank, job.rank_node.get(rank), e, "silent"
            ), "the only rank that logged nothing"
        return None, ""
    rank, kind = next(iter(odd.items()))
    st = job.state(rank)
    op = f"{majority[0]} SeqNum {seq}".strip()
    if kind == "desync":
        timeout = st.timeout
        assert timeout is not None  # a desync rank is one that timed out elsewhere
        waiting = next(
            x for x in st.collateral if x.kind == "watchdog-timeout" or "watchdog-status" in x.rules
        )
        return Suspect(
            rank, st.node, waiting, "desync"
        ), f"waits in {timeout[0]} SeqNum {timeout[1]} while the others wait in {op}"
    last = st.activity or (
        st.collateral[0] if st.collateral else st.roots[0] if st.roots else None
    )
    if last is None:
        last = first_timeout_event(job, majority)
    if st.activity is not None and "checkpoint" in st.activity.rules:
        kind = "checkpoint"
    return Suspect(rank, st.node, last, kind), f"the only rank that did not time out in {op}"


def _desync_named(job: Job) -> dict[int, Event]:
    named: dict[int, Event] = {}
    for e in job.unranked + [x for st in job.ranks.values() for x in st.collateral]:
        if e.kind != "desync":
            continue
        for m in DESYNC_RANKS.finditer(e.text):
            listed = (
                m.group(1) if m.group(2) and m.group(2) != "finished collective" else m.group(3)
            )
            if listed:
                for r in listed.split(","):
                    if r.strip().isdigit():
                        named.setdefault(int(r), e)
    return named


def _silent_ranks(job: Job) -> tuple[int, ...]:
    if job.world:
        return tuple(r for r in range(job.world) if r not in job.seen)
    return ()


def _collateral_groups(job: Job, exclude: set) -> list[CollateralGroup]:
    buckets: dict[tuple[str, str], list[int]] = {}
    for r, st in job.ranks.items():
        if r in exclude or not st.collateral:
            continue
        kinds = {e.kind for e in st.collateral}
        kind = next((k for k in COLLATERAL_ORDER if k in kinds), st.collateral[0].kind)
        detail = (
            f"{st.timeout[0]} SeqNum {st.timeout[1]}".strip()
            if kind == "watchdog-timeout" and st.timeout
            else ""
        )
        buckets.setdefault((kind, detail), []).append(r)
    groups = [
        CollateralGroup(kind=k, ranks=tuple(sorted(rs)), detail=d) for (k, d), rs in buckets.items()
    ]
    return sorted(
        groups,
        key=lambda g: (
            -len(g.ranks),
            COLLATERAL_ORDER.index(g.kind) if g.kind in COLLATERAL_ORDER else 99,
        ),
    )


def _failing_groups(failing: list[Suspect]) -> tuple[CollateralGroup, ...]:
    buckets: dict[str, list[int]] = {}
    for c in failing:
        if c.rank is not None:
            buckets.setdefault(c.kind, []).append(c.rank)
    return tuple(
        CollateralGroup(kind=k, ranks=tuple(sorted(rs)), detail=_root_detail(k))
        for k, rs in buckets.items()
    )


def _root_detail(kind: str) -> str:
    return ROOT_PHRASE.get(kind, kind)


def _clipped_message(e: Event, limit: int = 500) -> str:
    """The initiating line without its prefixes, clipped around what the rule matched."""
    message = e.prefix.message.strip() or e.text
    for name in e.rules:
        if m := rule_regex(name).search(message):
            return clip_around(message, m.start(), m.end(), limit)
    return message[:limit]
