"""What the scans of one job's files say, before attribution: per-file defaults (the rank or node a
file's name or prefixes give it) and the maps that turn pids, PCI bus ids and local ranks into
global ranks and ranks into nodes.

Node names are compared by `node_key` (lower case, no domain), so "node03.cluster" in syslog and
"node03" in NCCL's "node03:4242:4290 [3]" are one machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.kinds import HARDWARE
from bot.triage.fields import ELASTIC_FAILED, ELASTIC_RANK, NCCL_COMM, WORLD, nccl_bus, versions_in
from bot.triage.scan import Event, FileScan
from index.sources import node_key, parse_source_name


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
    # kernel lines that name this rank (bus id, pid)
    named: list[Event] = field(default_factory=list)

    def first_root(self) -> Event | None:
        """Its most telling error: the driver's Xid over the CUDA error that echoes it, a kernel
        line naming its process over one that does not, a specific error over a bare exception."""
        hardware = [e for e in self.roots if e.kind == "xid"] or [
            e for e in self.roots if e.kind in HARDWARE
        ]
        strong = [e for e in self.roots if e.strong]
        pool = hardware or strong or self.roots
        return min(pool, key=lambda e: (e not in self.named, e.file, e.line)) if pool else None


@dataclass
class Job:
    """Everything the scans said, attributed to ranks and nodes."""

    scans: list[FileScan]
    ranks: dict[int, RankState] = field(default_factory=dict)
    # root errors with no rank (Xid, kernel OOM)
    node_events: list[Event] = field(default_factory=list)
    unranked: list[Event] = field(default_factory=list)  # collateral/info lines with no rank
    seen: set[int] = field(default_factory=set)
    world: int | None = None
    versions: dict[str, str] = field(default_factory=dict)
    # (node key, pid) -> rank
    pid_rank: dict[tuple[str | None, int], int] = field(default_factory=dict)
    # torchrun: pid -> local rank
    pid_local: dict[tuple[str | None, int], int] = field(default_factory=dict)
    # (node key, PCI bus) -> rank
    bus_rank: dict[tuple[str | None, str], int] = field(default_factory=dict)
    rank_node: dict[int, str] = field(default_factory=dict)
    file_rank: dict[int, int] = field(default_factory=dict)
    file_node: dict[int, str] = field(default_factory=dict)
    file_local: dict[int, int] = field(default_factory=dict)  # torchrun --log-dir files
    kernel_files: set[int] = field(default_factory=set)  # dmesg / syslog / journal files
    local_map: dict[tuple[object, int], int] = field(default_factory=dict)
    single_node: bool = True

    def state(self, rank: int) -> RankState:
        if rank not in self.ranks:
            self.ranks[rank] = RankState(rank=rank, node=self.rank_node.get(rank))
        return self.ranks[rank]

    def node_of(self, e: Event) -> str | None:
        """The machine a line came from: its own prefix (host, pod, Ray ip), else its file's."""
        return e.prefix.node or self.file_node.get(e.file)

    def is_kernel(self, e: Event) -> bool:
        return e.prefix.source == "kernel" or e.file in self.kernel_files


def _key(node: str | None) -> str | None:
    return node_key(node) if node else None


def learn_maps(job: Job) -> None:
    """File-level defaults and the maps that turn pids, bus ids and local ranks into global
    ranks."""
    nodes_seen: set[str] = set()
    for scan in job.scans:
        origin = parse_source_name(scan.name)
        if origin.kernel:
            job.kernel_files.add(scan.index)
        labels = scan.label_ranks if len(scan.label_ranks) >= 2 else set()
        scan.ranks |= labels
        if origin.local_rank is not None:
            job.file_local[scan.index] = origin.local_rank
        if origin.rank is not None:
            job.file_rank[scan.index] = origin.rank
        elif len(scan.ranks) == 1 and not scan.local_ranks and not origin.kernel:
            job.file_rank[scan.index] = next(iter(scan.ranks))
        hosts = {e.prefix.node for e in scan.events if e.prefix.node}
        event_ranks = {e.prefix.rank for e in scan.events if e.prefix.rank is not None}
        if not scan.ranks and not scan.local_ranks and len(event_ranks) == 1 and not origin.kernel:
            scan.ranks |= event_ranks  # a per-rank file whose lines say rank=N
        if origin.node:
            job.file_node[scan.index] = origin.node
        elif len({node_key(h) for h in hosts}) == 1:
            job.file_node[scan.index] = next(iter(hosts))
        nodes_seen |= {node_key(h) for h in hosts} | (
            {node_key(origin.node)} if origin.node else set()
        )
    job.single_node = len(nodes_seen) <= 1
    comm_size: dict[tuple[str | None, int], int] = {}
    for scan in job.scans:
        for e in scan.events:
            _learn_from(job, e, comm_size)
    for index, rank in job.file_rank.items():
        if index in job.file_node:
            job.rank_node.setdefault(rank, job.file_node[index])


def _learn_from(job: Job, e: Event, comm_size: dict) -> None:
    p = e.prefix
    node = job.node_of(e)
    key_node = _key(node)
    if "nccl-comm" in e.rules and (m := NCCL_COMM.search(e.text)):
        rank, nranks = int(m.group(1)), int(m.group(2))
        job.world = max(job.world or 0, nranks)
        key = (key_node, p.pid or -1)
        if nranks >= comm_size.get(key, 0):  # the largest communicator is the global one
            comm_size[key] = nranks
            if p.pid is not None:
                job.pid_rank[key] = rank
            if node:
                job.rank_node.setdefault(rank, node)
                if m.group(3):
                    job.bus_rank[(key_node, nccl_bus(m.group(3)))] = rank
            local = p.local_rank if p.local_rank is not None else job.file_local.get(e.file)
            # "[default1]:node02:4242:4301 [1] NCCL INFO comm ... rank 5"
            if local is not None and p.rank is None:
                job.local_map[(key_node or ("file", e.file), local)] = rank
    if p.pid is not None and p.rank is not None:
        job.pid_rank[(key_node, p.pid)] = p.rank
    if p.rank is not None and node and p.node:
        job.rank_node.setdefault(p.rank, node)
    local = p.local_rank if p.local_rank is not None else job.file_local.get(e.file)
    if local is not None and p.rank is None and p.pg_rank is not None:
        job.local_map[(key_node or ("file", e.file), local)] = p.pg_rank
    if "elastic" in e.rules and (m := ELASTIC_FAILED.search(e.text)):
        job.pid_local[(key_node, int(m.group(3)))] = int(m.group(2))
    if "elastic-rank" in e.rules and (m := ELASTIC_RANK.search(e.text)):
        job.seen.add(int(m.group(1)))
    if "world-size" in e.rules and (m := WORLD.search(e.text)):
        job.world = max(job.world or 0, int(m.group(1) or m.group(2)))
    if any(rule.endswith("-version") for rule in e.rules):
        for name, value in versions_in(e.text).items():
            job.versions.setdefault(name, value)


@dataclass
class Suspect:
    """A rank (or, for an unattributed kernel line, a node) put forward as the initiator."""

    rank: int | None
    node: str | None
    event: Event
    kind: str
