"""Attribution: give every classified line its rank, and every node-level line (a kernel or driver
line: Xid, ECC, the OOM killer, a segfault) the rank whose device or process it names.

A rank comes from the line's own prefixes, a c10d "[Rank N]" field, the printing pid, or the file it
is in. A kernel line carries no rank: it belongs to the node it came from (its syslog host, its
file's name, its pod) and joins the rank the log ties to it, by the PCI bus id NCCL printed for that
rank, by the pid the kernel names, or as the only rank of that node that failed on its device.
"""

from __future__ import annotations

from bot.kinds import DEVICE_ERRORS, HARDWARE, NODE_LEVEL
from bot.triage.fields import KERNEL_PID, STATUS, WORK, XID, pci_bus
from bot.triage.job import Job
from bot.triage.scan import Event
from index.sources import node_key, same_node


def _key(node: str | None) -> str | None:
    return node_key(node) if node else None


def resolve(job: Job, e: Event) -> int | None:
    """The global rank that printed `e`, or None."""
    if job.is_kernel(e):
        return None
    p = e.prefix
    node = _key(job.node_of(e))
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
    local = (
        p.local_rank
        if p.local_rank is not None
        else job.file_local.get(e.file)
        if p.node is None
        else None
    )
    return _global_of_local(job, node, e.file, local)


def _global_of_local(job: Job, node: str | None, file: int, local: int | None) -> int | None:
    if local is None:
        return None
    key = (node or ("file", file), local)
    if key in job.local_map:
        return job.local_map[key]
    return local if job.single_node else None


def attribute(job: Job) -> None:
    for scan in job.scans:
        job.seen |= scan.ranks
        if scan.index in job.file_rank:
            job.seen.add(job.file_rank[scan.index])
        node = _key(job.file_node.get(scan.index)) or ("file", scan.index)
        locals_ = set(scan.local_ranks) | (
            {job.file_local[scan.index]} if scan.index in job.file_local else set()
        )
        for local in locals_:
            rank = job.local_map.get((node, local))
            if rank is None and job.single_node:
                rank = local
            if rank is not None:
                job.seen.add(rank)
    for scan in job.scans:
        for e in scan.events:
            rank = resolve(job, e)
            if rank is None:
                if e.role == "root" and (e.kind in NODE_LEVEL or job.is_kernel(e)):
                    job.node_events.append(e)
                else:
                    job.unranked.append(e)
                continue
            _add(job, rank, e)
    attribute_node_events(job)


def _add(job: Job, rank: int, e: Event) -> None:
    job.seen.add(rank)
    st = job.state(rank)
    if st.node is None:
        st.node = job.node_of(e) or job.rank_node.get(rank)
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


def attribute_node_events(job: Job) -> None:
    """Give a node-level line a rank: by PCI bus id or the pid it names first, then (for the lines
    left) as the one rank on that node that failed on its device. Unattributed, it stays a
    node-level root ("a GPU on node03")."""
    for direct in (True, False):
        remaining = []
        for e in job.node_events:
            rank = rank_of_node_event(job, e, direct=direct)
            if rank is None:
                remaining.append(e)
                continue
            st = job.state(rank)
            st.node = st.node or job.node_of(e)
            st.roots.insert(0, e)
            if direct:
                st.named.append(e)
            job.seen.add(rank)
        job.node_events = remaining


def rank_of_node_event(job: Job, e: Event, *, direct: bool) -> int | None:
    """The rank a node-level line names (`direct`: by bus id or pid), or else the only rank of its
    node that failed (on its device, for Xid and ECC lines)."""
    node = job.node_of(e)
    key = _key(node)
    if (m := XID.search(e.text)) is not None:
        bus = pci_bus(m.group(1))
        for (n, b), rank in job.bus_rank.items():
            if b == bus and (same_node(n, key) or (key is None and job.single_node)):
                return rank
        pid = int(m.group(3)) if m.group(3) else None
    elif m := KERNEL_PID.search(e.text):
        pid = int(m.group(1) or m.group(2))
    else:
        pid = None
    if pid is not None:
        for (n, p), rank in job.pid_rank.items():
            if p == pid and (same_node(n, key) or key is None):
                return rank
        for (n, p), local in job.pid_local.items():
            if p == pid and (same_node(n, key) or key is None):
                mapped = _global_of_local(job, n, e.file, local)
                if mapped is not None:
                    return mapped
    if direct or (node is None and not job.single_node):
        return None
    # the OOM killer and segfaults: any failure
    kinds = DEVICE_ERRORS if e.kind in HARDWARE else None
    on_node = []
    for st in job.ranks.values():
        if node is not None and not same_node(st.node or job.rank_node.get(st.rank), node):
            continue
        if any(kinds is None or r.kind in kinds for r in st.roots):
            on_node.append(st.rank)
    return on_node[0] if len(on_node) == 1 else None
