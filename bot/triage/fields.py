"""Field parsers for the lines triage picked: who printed a line (the prefix grammar plus the rank
fields inside c10d and logging messages) and the numbers in it (SeqNum, bus ids, Xid codes,
versions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from index.prefixes import Stamp, parse_line, parse_timestamp


@dataclass(slots=True)
class Who:
    """Who printed a line, as far as the line itself says, and the message without its prefixes."""

    rank: int | None = None  # global rank
    local_rank: int | None = None
    node: str | None = None
    pid: int | None = None
    pg_rank: int | None = (
        None  # "[Rank 5]" / "[PG 0 Rank 5]" inside a c10d message (default PG only)
    )
    source: str | None = None  # "kernel" for dmesg/syslog lines, the pod, the stream, the Ray actor
    ts: Stamp | None = None
    message: str = ""


_PG_RANK = re.compile(r"\[(?:PG (?:ID )?(\d+)(?: PG GUID \d+)? ?(?:\((\w+)\) )?)?Rank (\d+)\]")
_KV_RANK = re.compile(r"(?:^|[^\w.])(?:global_)?rank[=:]\s?(\d+)\b", re.IGNORECASE)
_LOCAL_KV = re.compile(r"local_rank[=:]\s?(\d+)\b", re.IGNORECASE)


def who(line: str) -> Who:
    """The prefix grammar's reading of `line`, plus c10d's "[Rank N]" and logging's "rank=N"
    fields."""
    p = parse_line(line)
    w = Who(
        rank=p.rank,
        local_rank=p.local_rank,
        node=p.node,
        pid=p.pid,
        source=p.source,
        ts=p.timestamp or parse_timestamp(p.text),
        message=p.text,
    )
    rest = p.text
    if m := _PG_RANK.search(rest, 0, 400):
        pg, pg_name = m.group(1), m.group(2)
        if pg is None or pg == "0" or pg_name == "default_pg":
            w.pg_rank = int(m.group(3))
    if w.rank is None and w.local_rank is None:
        if m := _KV_RANK.search(rest, 0, 200):
            w.rank = int(m.group(1))
        elif m := _LOCAL_KV.search(rest, 0, 200):
            w.local_rank = int(m.group(1))
    return w


WORK = re.compile(r"WorkNCCL\(SeqNum=(\d+), OpType=(\w+)")
STATUS = re.compile(
    r"(?:work sequence id: (\d+) PG status: last enqueued work: (-?\d+), last completed work: "
    r"(-?\d+)"
    r"|(?:detected by watchdog at work|Timeout at NCCL work): (\d+), last enqueued NCCL work: "
    r"(-?\d+), last completed NCCL work: (-?\d+))"
)
DESYNC_RANKS = re.compile(
    r"\[([\d, ]+)\] (joined but didn't finish|finished collective|are the lagging ranks)|ranks "
    r"\[([\d, ]+)\] are the lagging"
)
NCCL_COMM = re.compile(
    r"comm 0x[0-9a-fA-F]+ rank (\d+) n[Rr]anks (\d+)(?:.*?busId ([0-9a-fA-F]+))?"
)
XID = re.compile(r"Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+)(?:, pid=(\d+))?")
ELASTIC_RANK = re.compile(r"rank\s+: (\d+) \(local_rank: (\d+)\)")
ELASTIC_FAILED = re.compile(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\)")
# the process a kernel line names: "Killed process 4242 (python)", "python[4242]: segfault at ..."
KERNEL_PID = re.compile(r"[Kk]ill(?:ed)? process (\d+)|\[(\d+)\]: segfault at ")
EXCEPTION_NAME = re.compile(r"\b((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)): ")
WORLD = re.compile(r"(?i)world[_ ]size\W{1,3}(\d+)|with (\d+) nodes")
VERSION_FIELDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("nccl", re.compile(r"NCCL version (\d+\.\d+\.\d+)")),
    ("cuda", re.compile(r"NCCL version [\d.]+\+cuda(\d+\.\d+)")),
    (
        "torch",
        re.compile(r"(?:PyTorch|torch)(?: version)?(?:==|: |\s+)v?(\d+\.\d+\.\d+(?:[+.\w]*)?)"),
    ),
    (
        "cuda",
        re.compile(r"(?:CUDA Version|CUDA used to build PyTorch|CUDA runtime version): (\d+\.\d+)"),
    ),
    (
        "driver",
        re.compile(
            r"(?:Driver Version|Nvidia driver version): (\d+\.\d+(?:\.\d+)?)|Kernel "
            r"Module\s+(\d+\.\d+(?:\.\d+)?)"
        ),
    ),
)

XID_MEANING = {
    "13": "graphics engine exception",
    "31": "GPU memory page fault",
    "43": "GPU stopped processing",
    "45": "preemptive cleanup",
    "48": "double-bit ECC error",
    "63": "ECC page retirement",
    "64": "ECC page retirement failure",
    "74": "NVLink error",
    "79": "GPU fell off the bus",
    "92": "high single-bit ECC rate",
    "94": "contained ECC error",
    "95": "uncontained ECC error",
    "119": "GSP RPC timeout",
}


def versions_in(line: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for key, regex in VERSION_FIELDS:
        if key not in found and (m := regex.search(line)):
            found[key] = next(g for g in m.groups() if g)
    return found


def pci_bus(pci: str) -> str:
    """'0000:3b:00' / '0000:3B:00.0' -> '3b', comparable with NCCL's busId '3b000'."""
    parts = pci.lower().split(":")
    return parts[1] if len(parts) >= 2 else parts[0]


def nccl_bus(bus_id: str) -> str:
    """NCCL busId '3b000' or '1b000' -> '3b' / '1b' (the PCI bus number)."""
    bus_id = bus_id.lower()
    return bus_id[:-3] if len(bus_id) > 3 else bus_id
