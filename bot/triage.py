"""Rank-aware triage: which rank failed first, and which ranks only failed because of it.

On a 64-GPU job one rank dies (OOM, Xid, a data-loader crash) and the other 63 print NCCL watchdog
timeouts minutes later; the loudest lines are the wrong answer. `triage` reads every file once
(`bot.triage_scan`), attributes each classified line to a rank and node, and decides:

1. a rank with a root-type error of its own is the initiator; when several have one, the earliest
   by timestamp (a clear gap), a hardware error (Xid/ECC) over its software echoes, or torchrun's
   "first observed failure" decides; ranks failing together with no gap mean no single initiator;
2. with only collateral errors, what the software says decides: a desync report naming a rank, the
   one rank waiting in a different collective (SeqNum/OpType), or the one rank that never reached
   the collective everybody else timed out in (busy saving a checkpoint, say).

Line numbers are 1-based lines of "\\n".join(file texts), the convention of `Report.text`.
`focus_text` holds the initiator's own error block, so retrieval matches its failure and not the
collateral timeouts.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bot.model import CollateralGroup, Initiating, LogFile, Triage
from bot.triage_patterns import (
    DESYNC_RANKS,
    ELASTIC_RANK,
    EXCEPTION_NAME,
    NCCL_COMM,
    STATUS,
    WORK,
    WORLD,
    XID,
    XID_MEANING,
    Prefix,
    line_scanner,
    local_rank_of_file,
    nccl_bus,
    parse_file_name,
    parse_prefix,
    pci_bus,
    versions_in,
)
from bot.triage_scan import Buffers, Event, FileScan, chunks_of_bytes, chunks_of_path, scan_file

SCAN_THREADS = max(1, min(2, os.cpu_count() or 1))
SIMULTANEOUS_S = 1.0  # root errors closer than this on different ranks: no single initiator
FOCUS_BEFORE = 50
FOCUS_AFTER = 30
FOCUS_MAX_LINES = 80
CONTEXT_BYTES = 192 << 10

ROOT_PHRASE = {
    "oom": "ran out of GPU memory",
    "xid": "hit a GPU Xid error",
    "ecc": "hit an uncorrectable ECC error",
    "illegal-memory-access": "hit an illegal memory access",
    "device-assert": "hit a device-side assert",
    "dataloader": "lost a DataLoader worker",
    "io": "failed on file I/O",
    "host-oom": "was killed by the host OOM killer",
    "segfault": "crashed with a segmentation fault",
    "cuda-error": "hit a CUDA error",
    "network": "hit a network error",
    "exception": "raised an exception",
    "desync": "issued a different collective",
    "stalled": "never reached the collective",
    "checkpoint": "was still saving a checkpoint",
    "silent": "logged nothing",
}
COLLATERAL_PHRASE = {
    "watchdog-timeout": "timed out waiting",
    "remote-error": "saw NCCL remote errors (a peer exited)",
    "nccl-aborted": "aborted their NCCL communicators",
    "store-error": "lost their TCPStore connection",
    "heartbeat": "were stopped by the NCCL heartbeat monitor",
    "sigterm": "were stopped by the launcher (SIGTERM)",
    "elastic": "were reported failed by torchrun",
    "dump-signal": "were told to dump NCCL state",
    "watchdog-status": "reported NCCL watchdog failures",
    "desync": "reported a collective desync",
}
HARDWARE = ("xid", "ecc")
COLLATERAL_ORDER = ("watchdog-timeout", "remote-error", "nccl-aborted", "store-error", "heartbeat",
                    "desync", "dump-signal", "watchdog-status", "elastic", "sigterm")


# -- sources: in-memory texts or files on disk --------------------------------------------------------


class _TextSource:
    def __init__(self, log: LogFile):
        self.name = log.name
        self._text = log.text

    def chunks(self, buffers: Buffers) -> Iterator[memoryview]:
        yield from chunks_of_bytes(self._text.encode("utf-8", "replace"))

    def read(self, offset: int, length: int) -> bytes:
        return self._text.encode("utf-8", "replace")[offset : offset + length]


class _PathSource:
    def __init__(self, path: Path):
        self.name = str(path)
        self._path = Path(path)

    def chunks(self, buffers: Buffers) -> Iterator[memoryview]:
        yield from chunks_of_path(self._path, buffers)

    def read(self, offset: int, length: int) -> bytes:
        with open(self._path, "rb") as f:
            f.seek(offset)
            return f.read(length)


def triage(files: Sequence[LogFile]) -> Triage | None:
    """Triage in-memory texts; None when they carry no rank or node structure at all."""
    return _triage([_TextSource(f) for f in files])


def triage_paths(paths: Sequence[Path]) -> Triage | None:
    """The same, streaming files from disk in bounded memory (lines counted as if "\\n"-joined)."""
    return _triage([_PathSource(Path(p)) for p in paths])


# -- per-rank state ------------------------------------------------------------------------------------


@dataclass
class RankState:
    rank: int
    node: str | None = None
    roots: list[Event] = field(default_factory=list)
    collateral: list[Event] = field(default_factory=list)
    activity: Event | None = None
    timeout: tuple[str, int] | None = None  # (OpType, SeqNum) of its first watchdog timeout
    enqueued: int | None = None
    completed: int | None = None

    def first_root(self) -> Event | None:
        hardware = [e for e in self.roots if e.kind in HARDWARE]
        strong = [e for e in self.roots if e.strong]
        pool = hardware or strong or self.roots
        return min(pool, key=lambda e: (e.file, e.line)) if pool else None


@dataclass
class Job:
    """Everything the scans said, attributed to ranks and nodes."""

    scans: list[FileScan]
    bases: list[int]  # global line of each file's line 0
    ranks: dict[int, RankState] = field(default_factory=dict)
    node_events: list[Event] = field(default_factory=list)  # root errors with no rank (Xid, kernel OOM)
    unranked: list[Event] = field(default_factory=list)  # collateral/info lines with no rank
    seen: set[int] = field(default_factory=set)
    world: int | None = None
    versions: dict[str, str] = field(default_factory=dict)
    pid_rank: dict[tuple[str | None, int], int] = field(default_factory=dict)
    bus_rank: dict[tuple[str, str], int] = field(default_factory=dict)
    rank_node: dict[int, str] = field(default_factory=dict)
    file_rank: dict[int, int] = field(default_factory=dict)
    file_node: dict[int, str] = field(default_factory=dict)
    file_local: dict[int, int] = field(default_factory=dict)  # torchrun --log-dir files
    local_map: dict[tuple[object, int], int] = field(default_factory=dict)
    single_node: bool = True

    def gline(self, e: Event) -> int:
        return self.bases[e.file] + e.line

    def state(self, rank: int) -> RankState:
        if rank not in self.ranks:
            self.ranks[rank] = RankState(rank=rank, node=self.rank_node.get(rank))
        return self.ranks[rank]


def _triage(sources: list) -> Triage | None:
    scans = _scan_all(sources)
    bases, total = [], 0
    for scan in scans:
        bases.append(total)
        total += scan.lines
    job = Job(scans=scans, bases=bases)
    _learn_maps(job)
    _attribute(job)
    if not job.seen and not job.node_events:
        return None
    return _verdict(job, sources)


def _scan_all(sources: list) -> list[FileScan]:
    """Scan the files on SCAN_THREADS threads: reading, Hyperscan and numpy release the GIL."""
    line_scanner()  # compile once, before the threads need it
    local = threading.local()

    def scan_one(item: tuple[int, object]) -> FileScan:
        index, source = item
        if not hasattr(local, "buffers"):
            local.buffers = Buffers()
        # A file whose name carries its rank needs no census of the prefixes in it.
        needed = parse_file_name(source.name)[0] is None
        return scan_file(index, source.name, source.chunks(local.buffers), census_needed=needed, buffers=local.buffers)

    if len(sources) < 2:
        return [scan_one(item) for item in enumerate(sources)]
    with ThreadPoolExecutor(max_workers=SCAN_THREADS) as pool:
        return list(pool.map(scan_one, enumerate(sources)))


def _learn_maps(job: Job) -> None:
    """File-level defaults and the maps that turn pids, bus ids and local ranks into global ranks."""
    nodes_seen: set[str] = set()
    for scan in job.scans:
        name_rank, name_node = parse_file_name(scan.name)
        labels = scan.label_ranks if len(scan.label_ranks) >= 2 else set()
        scan.ranks |= labels
        if (local := local_rank_of_file(scan.name)) is not None and name_rank is None:
            job.file_local[scan.index] = local
        if name_rank is not None:
            job.file_rank[scan.index] = name_rank
        elif len(scan.ranks) == 1 and not scan.local_ranks:
            job.file_rank[scan.index] = next(iter(scan.ranks))
        hosts = {e.prefix.node for e in scan.events if e.prefix.node}
        event_ranks = {e.prefix.rank for e in scan.events if e.prefix.rank is not None}
        if not scan.ranks and not scan.local_ranks and len(event_ranks) == 1:
            scan.ranks |= event_ranks  # a per-rank file whose lines say rank=N
        if name_node:
            job.file_node[scan.index] = name_node
        elif len(hosts) == 1:
            job.file_node[scan.index] = next(iter(hosts))
        nodes_seen |= hosts | ({name_node} if name_node else set())
    job.single_node = len(nodes_seen) <= 1
    comm_size: dict[tuple[str | None, int], int] = {}
    for scan in job.scans:
        for e in scan.events:
            p = e.prefix
            node = p.node or job.file_node.get(e.file)
            if "nccl-comm" in e.rules and (m := NCCL_COMM.search(e.text)):
                rank, nranks = int(m.group(1)), int(m.group(2))
                job.world = max(job.world or 0, nranks)
                key = (node, p.pid or -1)
                if nranks >= comm_size.get(key, 0):  # the largest communicator is the global one
                    comm_size[key] = nranks
                    if p.pid is not None:
                        job.pid_rank[key] = rank
                    if node:
                        job.rank_node.setdefault(rank, node)
                        if m.group(3):
                            job.bus_rank[(node, nccl_bus(m.group(3)))] = rank
            if p.pid is not None and p.rank is not None:
                job.pid_rank[(node, p.pid)] = p.rank
            if p.rank is not None and node and p.node:
                job.rank_node.setdefault(p.rank, node)
            local = p.local_rank if p.local_rank is not None else job.file_local.get(e.file)
            if local is not None and p.rank is None and p.pg_rank is not None:
                job.local_map[(node or ("file", e.file), local)] = p.pg_rank
            if "elastic-rank" in e.rules and (m := ELASTIC_RANK.search(e.text)):
                job.seen.add(int(m.group(1)))
            if "world-size" in e.rules and (m := WORLD.search(e.text)):
                job.world = max(job.world or 0, int(m.group(1) or m.group(2)))
            if any(rule.endswith("-version") for rule in e.rules):
                for key, value in versions_in(e.text).items():
                    job.versions.setdefault(key, value)
    for index, rank in job.file_rank.items():
        if index in job.file_node:
            job.rank_node.setdefault(rank, job.file_node[index])


def _resolve(job: Job, e: Event) -> int | None:
    p: Prefix = e.prefix
    node = p.node or job.file_node.get(e.file)
    if p.rank is not None:
        return p.rank
    if p.local_rank is not None:
        for key in ((node or ("file", e.file), p.local_rank), (("file", e.file), p.local_rank)):
            if key in job.local_map:
                return job.local_map[key]
    if p.pid is not None and (node, p.pid) in job.pid_rank:
        return job.pid_rank[(node, p.pid)]
    if p.pg_rank is not None:
        return p.pg_rank
    if e.file in job.file_rank and p.node is None:
        return job.file_rank[e.file]
    local = p.local_rank if p.local_rank is not None else job.file_local.get(e.file) if p.node is None else None
    if local is not None:
        key = (node or ("file", e.file), local)
        if key in job.local_map:
            return job.local_map[key]
        if job.single_node:
            return local
    return None


def _attribute(job: Job) -> None:
    for scan in job.scans:
        job.seen |= scan.ranks
        if scan.index in job.file_rank:
            job.seen.add(job.file_rank[scan.index])
        node = job.file_node.get(scan.index) or ("file", scan.index)
        locals_ = set(scan.local_ranks) | ({job.file_local[scan.index]} if scan.index in job.file_local else set())
        for local in locals_:
            rank = job.local_map.get((node, local))
            if rank is None and job.single_node:
                rank = local
            if rank is not None:
                job.seen.add(rank)
    for scan in job.scans:
        for e in scan.events:
            rank = _resolve(job, e)
            if rank is None:
                if e.role == "root" and e.kind in ("xid", "host-oom", "ecc"):
                    job.node_events.append(e)
                else:
                    job.unranked.append(e)
                continue
            job.seen.add(rank)
            st = job.state(rank)
            if st.node is None:
                st.node = e.prefix.node or job.file_node.get(e.file) or job.rank_node.get(rank)
            if e.role == "root":
                st.roots.append(e)
            elif e.role == "collateral":
                st.collateral.append(e)
                if e.kind == "watchdog-timeout" and st.timeout is None and (m := WORK.search(e.text)):
                    st.timeout = (m.group(2), int(m.group(1)))
                if "watchdog-status" in e.rules and (m := STATUS.search(e.text)):
                    g = [x for x in m.groups() if x is not None]
                    st.enqueued, st.completed = int(g[1]), int(g[2])
                    if st.timeout is None:
                        st.timeout = ("", int(g[0]))
            elif e.kind == "activity":
                st.activity = e
    _attribute_node_events(job)


def _attribute_node_events(job: Job) -> None:
    """Give an Xid or kernel OOM-kill line a rank: by PCI bus id, by pid, or by the one rank on that
    node with a CUDA error. Unattributed, it stays a node-level root."""
    remaining = []
    for e in job.node_events:
        node = e.prefix.node or job.file_node.get(e.file)
        rank = None
        if (m := XID.search(e.text)) is not None:
            rank = job.bus_rank.get((node, pci_bus(m.group(1))))
            if rank is None and m.group(3):
                rank = job.pid_rank.get((node, int(m.group(3))))
        elif (pid := _killed_pid(e.text)) is not None:
            rank = job.pid_rank.get((node, pid))
        if rank is None and node:
            on_node = [st.rank for st in job.ranks.values() if st.node == node and st.roots]
            rank = on_node[0] if len(on_node) == 1 else None
        if rank is None:
            remaining.append(e)
            continue
        st = job.state(rank)
        st.node = st.node or node
        st.roots.insert(0, e)
    job.node_events = remaining


def _killed_pid(text: str) -> int | None:
    _head, _, tail = text.partition("Killed process ")
    digits = "".join(ch for ch in tail[:12] if ch.isdigit()) if tail else ""
    return int(digits) if digits else None


# -- the verdict ---------------------------------------------------------------------------------------


@dataclass
class Suspect:
    rank: int | None
    node: str | None
    event: Event
    kind: str


def _verdict(job: Job, sources: list) -> Triage:
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
            line=job.gline(e),
            text=e.prefix.message.strip()[:500] or e.text[:500],
            file=job.scans[e.file].name,
            kind=initiator.kind,
            timestamp=e.ts[1] if e.ts else None,
            reason=reason,
        )
    timeouts = {r: st.timeout for r, st in job.ranks.items() if st.timeout}
    summary = _summary(initiator, initiating, groups, failing, silent, majority, no_single, timeouts)
    # One rank's log is all its own lines: retrieval keeps the whole text.
    focus = _focus_text(job, sources, initiator, failing, majority) if len(job.seen) > 1 else ""
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
        summary=summary,
    )


def _root_candidates(job: Job) -> list[Suspect]:
    out = []
    for st in job.ranks.values():
        e = st.first_root()
        if e is not None:
            out.append(Suspect(st.rank, st.node, e, e.kind))
    for e in job.node_events:
        out.append(Suspect(None, e.prefix.node or job.file_node.get(e.file), e, e.kind))
    strong = [c for c in out if c.event.strong]
    return sorted(strong or out, key=lambda c: (c.event.ts[0] if c.event.ts else float("inf"), job.gline(c.event)))


def _pick_root(job: Job, cands: list[Suspect]) -> tuple[Suspect | None, str, bool]:
    if not cands:
        return None, "", False
    if len(cands) == 1:
        return cands[0], "the only rank with a root-type error", False
    all_timed = all(c.event.ts for c in cands)
    if all_timed and cands[1].event.ts[0] - cands[0].event.ts[0] >= SIMULTANEOUS_S:
        return cands[0], f"earliest root-type error ({cands[0].event.ts[1]})", False
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
    """Ranks torchrun lists under "Root Cause (first observed failure)" (the rank line follows it)."""
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
        return Suspect(rank, st.node if st else job.rank_node.get(rank), e, "desync"), "named by the NCCL desync report"
    timed = {r: st for r, st in job.ranks.items() if st.timeout}
    if majority is None or len(timed) < 2:
        return None, ""
    seq = majority[1]
    odd: dict[int, str] = {}
    for r, st in timed.items():
        if st.timeout != majority and st.timeout[0] and majority[0]:
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
            e = _first_timeout_event(job, majority)
            return Suspect(rank, job.rank_node.get(rank), e, "silent"), "the only rank that logged nothing"
        return None, ""
    rank, kind = next(iter(odd.items()))
    st = job.state(rank)
    op = f"{majority[0]} SeqNum {seq}".strip()
    if kind == "desync":
        e = next(x for x in st.collateral if x.kind == "watchdog-timeout" or "watchdog-status" in x.rules)
        return Suspect(rank, st.node, e, "desync"), f"waits in {st.timeout[0]} SeqNum {st.timeout[1]} while the others wait in {op}"
    e = st.activity or (st.collateral[0] if st.collateral else st.roots[0] if st.roots else None)
    if e is None:
        e = _first_timeout_event(job, majority)
    if st.activity is not None and "checkpoint" in st.activity.rules:
        kind = "checkpoint"
    return Suspect(rank, st.node, e, kind), f"the only rank that did not time out in {op}"


def _desync_named(job: Job) -> dict[int, Event]:
    named: dict[int, Event] = {}
    for e in job.unranked + [x for st in job.ranks.values() for x in st.collateral]:
        if e.kind != "desync":
            continue
        for m in DESYNC_RANKS.finditer(e.text):
            listed = m.group(1) if m.group(2) and m.group(2) != "finished collective" else m.group(3)
            if listed:
                for r in listed.split(","):
                    if r.strip().isdigit():
                        named.setdefault(int(r), e)
    return named


def _first_timeout_event(job: Job, majority) -> Event:
    events = [e for st in job.ranks.values() for e in st.collateral if e.kind == "watchdog-timeout"]
    events = events or [e for st in job.ranks.values() for e in st.collateral] or job.unranked
    return min(events, key=job.gline)


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
        detail = f"{st.timeout[0]} SeqNum {st.timeout[1]}".strip() if kind == "watchdog-timeout" and st.timeout else ""
        buckets.setdefault((kind, detail), []).append(r)
    groups = [CollateralGroup(kind=k, ranks=tuple(sorted(rs)), detail=d) for (k, d), rs in buckets.items()]
    return sorted(groups, key=lambda g: (-len(g.ranks), COLLATERAL_ORDER.index(g.kind) if g.kind in COLLATERAL_ORDER else 99))


def _failing_groups(failing: list[Suspect]) -> tuple[CollateralGroup, ...]:
    buckets: dict[str, list[int]] = {}
    for c in failing:
        if c.rank is not None:
            buckets.setdefault(c.kind, []).append(c.rank)
    return tuple(CollateralGroup(kind=k, ranks=tuple(sorted(rs)), detail=_root_detail(k)) for k, rs in buckets.items())


def _root_detail(kind: str) -> str:
    return ROOT_PHRASE.get(kind, kind)


# -- words ---------------------------------------------------------------------------------------------


def _who(rank: int | None, node: str | None) -> str:
    if rank is None:
        return f"a GPU on {node}" if node else "an unattributed process"
    return f"rank {rank} on {node}" if node else f"rank {rank}"


def _root_phrase(c: Suspect) -> str:
    if c.kind == "xid" and (m := XID.search(c.event.text)):
        meaning = XID_MEANING.get(m.group(2))
        return f"hit Xid {m.group(2)}" + (f" ({meaning})" if meaning else "")
    if c.kind == "exception" and (m := EXCEPTION_NAME.search(c.event.text)):
        return f"raised {m.group(1).rsplit('.', 1)[-1]}"
    return ROOT_PHRASE.get(c.kind, f"failed ({c.kind})")


def collateral_phrase(group: CollateralGroup) -> str:
    """'63 ranks timed out waiting on ALLREDUCE SeqNum 8812' (used by the summary and the rank table)."""
    n = len(group.ranks)
    who = f"{n} rank" if n == 1 else f"{n} ranks"
    if group.kind == "watchdog-timeout":
        return f"{who} timed out waiting" + (f" on {group.detail}" if group.detail else "")
    phrase = COLLATERAL_PHRASE.get(group.kind, group.kind)
    if n == 1:
        phrase = phrase.replace("were ", "was ").replace(" their ", " its ")
    return f"{who} {phrase}"


def _op_of(c: Suspect, timeouts: dict[int, tuple[str, int]]) -> str:
    op = timeouts.get(c.rank)
    return f"{op[0]} SeqNum {op[1]}".strip() if op else "another collective"


def _summary(initiator, initiating, groups, failing, silent, majority, no_single, job_timeout) -> str:
    tail = ", ".join(collateral_phrase(g) for g in groups[:3])
    if initiator is not None:
        if initiator.kind in ("stalled", "checkpoint", "silent", "desync") and majority:
            op = f"{majority[0]} SeqNum {majority[1]}".strip()
            phrase = {
                "stalled": f"never reached {op}",
                "checkpoint": f"was still saving a checkpoint and never reached {op}",
                "silent": f"logged nothing while the others waited in {op}",
                "desync": f"waited in a different collective ({_op_of(initiator, job_timeout)}) from the others",
            }[initiator.kind]
            if initiator.kind == "desync" and "desync report" in (initiating.reason or ""):
                phrase = "was named by the NCCL desync report as the lagging rank"
        else:
            phrase = _root_phrase(initiator) + " first"
        when = ""
        if initiating and initiating.timestamp:
            stalled = initiator.kind in ("stalled", "checkpoint", "silent")
            when = f" (last line {initiating.timestamp})" if stalled else f" at {initiating.timestamp}"
        head = f"{_who(initiator.rank, initiator.node)} {phrase}{when}"
        extra = f"; {len(failing)} other rank(s) also failed on their own" if failing else ""
        return f"{head}; {tail}{extra}" if tail else head + extra
    if failing:
        kinds = Counter(c.kind for c in failing)
        kind, _ = kinds.most_common(1)[0]
        first = failing[0]
        when = f" (first at {first.event.ts[1]})" if first.event.ts else ""
        what = ROOT_PHRASE.get(kind, kind)
        head = f"No single initiator: {len(failing)} ranks failed at about the same time; most {what}{when}"
        return f"{head}; {tail}" if tail else head
    if groups:
        return f"No single initiator: {tail}, and no rank reported an error of its own"
    return "No single initiator: no rank reported a root-type error"


# -- focus text ------------------------------------------------------------------------------------


def _focus_text(job: Job, sources: list, initiator: Suspect | None, failing: list[Suspect], majority) -> str:
    blocks: list[list[str]] = []
    if initiator is not None:
        e = initiator.event
        if initiator.kind == "xid":
            blocks.append([x.prefix.message for x in _node_lines(job, e)])
            st = job.ranks.get(initiator.rank) if initiator.rank is not None else None
            others = [x for x in (st.roots if st else []) if x.kind != "xid"]
            if others:
                blocks.append(_block(job, sources, others[0], FOCUS_BEFORE // 2, FOCUS_AFTER // 2))
        elif initiator.kind in ("stalled", "checkpoint", "silent", "desync"):
            if e.kind == "activity":
                blocks.append(_block(job, sources, e, 12, 12))
            elif initiator.kind == "desync":
                blocks.append(_block(job, sources, e, 0, 8))
            desync = [x for x in job.unranked + [y for st in job.ranks.values() for y in st.collateral] if x.kind == "desync"]
            if desync:
                blocks.append([x.prefix.message for x in desync[:6]])
            if majority is not None:
                t = _first_timeout_event(job, majority)
                if t is not e:
                    blocks.append(_block(job, sources, t, 0, 4))
        else:
            blocks.append(_block(job, sources, e, FOCUS_BEFORE, FOCUS_AFTER))
    elif failing:
        blocks.append(_block(job, sources, failing[0].event, FOCUS_BEFORE, FOCUS_AFTER))
    elif majority is not None:
        blocks.append(_block(job, sources, _first_timeout_event(job, majority), 4, 8))
    lines: list[str] = []
    for block in blocks:
        for line in block:
            if len(lines) >= FOCUS_MAX_LINES:
                break
            lines.append(line.rstrip())
    return "\n".join(lines).strip("\n")


def _node_lines(job: Job, e: Event) -> list[Event]:
    node = e.prefix.node or job.file_node.get(e.file)
    same = [x for x in job.node_events + [y for st in job.ranks.values() for y in st.roots]
            if x.kind == "xid" and (x.prefix.node or job.file_node.get(x.file)) == node]
    uniq = {(x.file, x.line): x for x in same}
    return sorted(uniq.values(), key=lambda x: (x.file, x.line))[:4] or [e]


def _block(job: Job, sources: list, e: Event, before: int, after: int) -> list[str]:
    """The event's rank's own lines around it, prefixes stripped: the traceback that ends in it (or
    `before` lines of context) and up to `after` lines that follow."""
    start = max(0, e.offset - CONTEXT_BYTES)
    data = sources[e.file].read(start, e.offset - start + CONTEXT_BYTES // 2)
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    skip = 1 if start > 0 else 0  # a partial first line
    index = data[: e.offset - start].count(b"\n")
    own = _resolve(job, e)
    owned: list[tuple[int, str]] = []  # (line index, message) of this rank's lines
    current = e.file in job.file_rank or e.file in job.file_local or own is None
    for i in range(skip, len(lines)):
        p = parse_prefix(lines[i])
        if p.rank is not None or p.local_rank is not None or p.pid is not None or p.pg_rank is not None:
            rank = _resolve(job, Event(e.file, 0, 0, "", "", "", False, ("",), p))
            if rank is not None:
                current = rank == own
        message = p.message
        if current or i == index:
            owned.append((i, message))
    pos = next((k for k, (i, _) in enumerate(owned) if i == index), None)
    if pos is None:
        return [e.prefix.message]
    head = owned[max(0, pos - before) : pos]
    tb = max((k for k, (_, m) in enumerate(head) if "Traceback (most recent call last)" in m), default=None)
    if tb is not None:
        head = head[tb:]
    else:
        head = head[-min(len(head), 3) :]
    tail = owned[pos + 1 : pos + 1 + after]
    return [m for _, m in head] + [owned[pos][1]] + [m for _, m in tail]
