"""What triage knows about log text: the line-classification table and the prefix/field parsers.

The table (`RULES`) sorts lines into root-type errors (a rank's own failure: OOM, Xid, illegal memory
access, a data-loader death, ...), collateral-type errors (what survivors print when a peer dies:
watchdog timeouts, aborted communicators, SIGTERM from the agent) and a few informative lines
(versions, world size, NCCL rank maps, what a rank was busy with). All rules are compiled once into
one `MultiScanner`, so a 10 MB log is classified in one linear pass; the Python parsers below only
ever run on the few lines the scanner picked, to read rank, node, timestamp and numbers from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from index.scanner import MultiScanner

Role = Literal["root", "collateral", "info"]


@dataclass(frozen=True)
class Rule:
    name: str
    role: Role
    kind: str  # what the line says, e.g. "oom", "watchdog-timeout", "nccl-comm"
    pattern: str  # RE2/Hyperscan dialect: no lookaround, no backrefs, no line anchors
    strong: bool = True  # root rules only: a weak root (a bare exception) yields to a strong one


RULES: tuple[Rule, ...] = (
    # -- root-type: the rank's own failure ---------------------------------------------------------
    Rule("oom", "root", "oom", r"CUDA out of memory|OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED|CUDA error: out of memory|Cuda failure '?out of memory"),
    Rule("xid", "root", "xid", r"NVRM: Xid \(PCI:[0-9a-fA-F:.]+\): \d+"),
    Rule("gpu-lost", "root", "xid", r"GPU has fallen off the bus|: GPU is lost"),
    Rule("ecc", "root", "ecc", r"uncorrectable ECC error"),
    Rule("illegal-memory", "root", "illegal-memory-access", r"an illegal memory access was encountered|misaligned address|an illegal instruction was encountered"),
    Rule("device-assert", "root", "device-assert", r"device-side assert triggered|thread: \[\d+,\d+,\d+\] Assertion"),
    Rule("dataloader", "root", "dataloader", r"DataLoader worker \(pid|Unexpected bus error encountered in worker|DataLoader timed out after \d+ seconds|[Pp]in memory thread exited unexpectedly"),
    Rule("io", "root", "io", r"(?:OSError|IOError|FileNotFoundError|PermissionError): \[Errno \d+\]|No space left on device|Input/output error|Stale file handle|Disk quota exceeded|Read-only file system"),
    Rule("host-oom", "root", "host-oom", r"Out of memory: Killed process \d+|invoked oom-killer"),
    Rule("segfault", "root", "segfault", r"Segmentation fault \(core dumped\)|Fatal Python error: Segmentation fault|Caught signal 11 \(Segmentation fault"),
    Rule("cuda-error", "root", "cuda-error", r"CUDA error: |unhandled cuda error|Cuda failure '|CUDA driver error", strong=False),
    Rule("network", "root", "network", r"NCCL WARN NET/|transport retry counter exceeded|unhandled system error", strong=False),
    Rule("exception", "root", "exception", r"\w(?:Error|Exception): ", strong=False),
    # -- collateral-type: what survivors print -----------------------------------------------------
    Rule("watchdog-timeout", "collateral", "watchdog-timeout", r"Watchdog caught collective operation timeout"),
    Rule("watchdog-status", "collateral", "watchdog-status", r"failure detected by watchdog at work sequence id|detected by watchdog at work: \d+|Timeout at NCCL work: \d+"),
    Rule("nccl-aborted", "collateral", "nccl-aborted", r"Some NCCL operations have failed or timed out|we are taking the entire process down|Process group watchdog thread terminated with exception|NCCL communicator was aborted|DistBackendError"),
    Rule("remote-error", "collateral", "remote-error", r"remote process exited or there was a network error|ncclRemoteError|Connection closed by remote peer|Connection closed by peer"),
    Rule("store-error", "collateral", "store-error", r"recvValue failed|recvBytes failed|sendBytes failed|Failed to recv, got 0 bytes|DistStoreError|DistNetworkError|Connection reset by peer|Broken pipe"),
    Rule("heartbeat", "collateral", "heartbeat", r"Heartbeat monitor timed out|watchdog got stuck for"),
    Rule("dump-signal", "collateral", "dump-signal", r"Received a dump signal due to a collective timeout from"),
    Rule("sigterm", "collateral", "sigterm", r"closing signal SIG(?:TERM|KILL)|got signal: \d+|Received Signals\.SIG\w+ death signal|Received \d+ death signal|SignalException|Signal 15 \(SIGTERM\) received"),
    Rule("elastic", "collateral", "elastic", r"ChildFailedError|failed \(exitcode: -?\d+\) local_rank: \d+ \(pid: \d+\)"),
    Rule("desync", "collateral", "desync", r"caused the desync are|are the lagging ranks that caused this timeout|joined but didn't finish collective #|but didn't join collective #|Detected mismatch between collectives on ranks"),
    # -- informative lines -------------------------------------------------------------------------
    Rule("elastic-root", "info", "elastic-root", r"Root Cause \(first observed failure\)"),
    Rule("elastic-rank", "info", "elastic-rank", r"rank\s+: \d+ \(local_rank: \d+\)"),
    Rule("nccl-comm", "info", "nccl-comm", r"NCCL INFO comm 0x[0-9a-fA-F]+ rank \d+ n[Rr]anks \d+"),
    Rule("nccl-version", "info", "version", r"NCCL version \d+\.\d+\.\d+"),
    Rule("torch-version", "info", "version", r"(?:PyTorch|torch)(?: version)?(?:==|: |\s+)v?\d+\.\d+\.\d+"),
    Rule("cuda-version", "info", "version", r"CUDA Version: \d+\.\d+|CUDA used to build PyTorch: \d+\.\d+|CUDA runtime version: \d+\.\d+"),
    Rule("driver-version", "info", "version", r"Driver Version: \d+\.\d+|Kernel Module\s+\d+\.\d+|Nvidia driver version: \d+\.\d+"),
    Rule("world-size", "info", "world-size", r"(?:world_size|WORLD_SIZE|[Ww]orld size)\W{1,3}\d+|Completed store-based barrier for key:\S+ with \d+ nodes"),
    Rule("checkpoint", "info", "activity", r"[Ss]av(?:e|ing) (?:the )?(?:model |sharded |distributed |full )?(?:state[_ ]dict|checkpoint)|dcp\.(?:async_)?save|save_checkpoint\("),
    Rule("eval", "info", "activity", r"[Rr]unning [Ee]valuation"),
)

RULE_INDEX = {rule.name: i for i, rule in enumerate(RULES)}


# Streaming triage scans 8 MB chunks that are mostly noise: it asks the scanner for end offsets
# (MultiScanner.scan_offsets) and counts lines only around the few hits.
@cache
def line_scanner() -> MultiScanner:
    """All rules in one multi-pattern scanner, compiled once per process."""
    return MultiScanner([rule.pattern for rule in RULES])


def classify(rule_ids: list[int]) -> tuple[Role, str, bool] | None:
    """The role and kind of a line from the rules it matched.

    A strong root wins over everything (a watchdog line that carries "illegal memory access" is the
    error itself); a collateral rule wins over a weak root (DistBackendError is an exception, but
    a survivor's); a weak root wins over info lines.
    """
    roles = [RULES[i] for i in rule_ids]
    strong = [r for r in roles if r.role == "root" and r.strong]
    if strong:
        return "root", strong[0].kind, True
    collateral = [r for r in roles if r.role == "collateral"]
    if collateral:
        return "collateral", collateral[0].kind, False
    weak = [r for r in roles if r.role == "root"]
    if weak:
        return "root", weak[0].kind, False
    if roles:
        return "info", roles[0].kind, False
    return None


# -- prefixes ----------------------------------------------------------------------------------------


@dataclass
class Prefix:
    """Who printed a line, as far as its prefixes say, and the message without them."""

    rank: int | None = None  # global rank
    local_rank: int | None = None
    node: str | None = None
    pid: int | None = None
    pg_rank: int | None = None  # "[Rank 5]" / "[PG 0 Rank 5]" inside a c10d message (default PG only)
    message: str = ""


_RAY = re.compile(r"\((?:[\w.]+?)(?:\[rank=(\d+)\])? pid=(\d+)(?:, ip=([\w.:-]+))?\)\s?")
_SLURM = re.compile(r"\s{0,4}(\d{1,6}): ")
_MPI = re.compile(r"\[\d+,(\d+)\]<std(?:out|err)>:\s?")
_TORCHRUN = re.compile(r"\[(rank|default|[a-z_]+?)(\d+)\]:\s?")
_PDSH = re.compile(r"([a-z][a-z0-9-]*\d[a-z0-9.-]*): ")
_NCCL_HOST = re.compile(r"([\w.-]+):(\d+):(\d+) \[(\d+)\] ")
_SYSLOG = re.compile(
    r"(?:[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:?\d\d|Z)?) ([\w.-]+) kernel: "
)
_DMESG = re.compile(r"\[\s*\d+\.\d+\] ")
_PG_RANK = re.compile(r"\[(?:PG (?:ID )?(\d+)(?: PG GUID \d+)? ?(?:\((\w+)\) )?)?Rank (\d+)\]")
_KV_RANK = re.compile(r"(?<![\w.])(?:global_)?rank[=:]\s?(\d+)\b", re.IGNORECASE)
_LOCAL_KV = re.compile(r"local_rank[=:]\s?(\d+)\b", re.IGNORECASE)


def parse_prefix(line: str) -> Prefix:
    """Peel launcher and library prefixes off a line: Ray, srun --label, mpirun --tag-output, pdsh,
    torchrun/elastic ([rank3]: is global, [default3]: is the local rank), NCCL host:pid:tid [dev],
    syslog/dmesg kernel lines; then look for c10d "[Rank N]" and logging "rank=N" fields."""
    p = Prefix()
    rest = line
    for _ in range(6):  # prefixes nest: "(RayWorker pid=1) [rank3]:[E...] ..." or "node02: 12: ..."
        if m := _RAY.match(rest):
            if m.group(1) is not None and p.rank is None:
                p.rank = int(m.group(1))
            p.pid = int(m.group(2))
            if m.group(3):
                p.node = p.node or m.group(3)
        elif m := _MPI.match(rest):
            p.rank = int(m.group(1)) if p.rank is None else p.rank
        elif m := _TORCHRUN.match(rest):
            if m.group(1) == "rank":
                p.rank = int(m.group(2))
            else:  # torchrun --tee / DeepSpeed / Accelerate: "[default3]:" carries the local rank
                p.local_rank = int(m.group(2))
        elif (m := _SLURM.match(rest)) and p.rank is None:
            p.rank = int(m.group(1))
        elif (m := _PDSH.match(rest)) and p.node is None and not _NCCL_HOST.match(rest):
            p.node = m.group(1)
        else:
            break
        rest = rest[m.end():]
    if m := _NCCL_HOST.match(rest):
        p.node = p.node or m.group(1)
        p.pid = int(m.group(2))
    elif m := _SYSLOG.match(rest):
        p.node = p.node or m.group(1)
        rest = rest[m.end():]
    elif m := _DMESG.match(rest):
        rest = rest[m.end():]
    p.message = rest
    if m := _PG_RANK.search(rest, 0, 400):
        pg, pg_name = m.group(1), m.group(2)
        if pg is None or pg == "0" or pg_name == "default_pg":
            p.pg_rank = int(m.group(3))
    if p.rank is None and p.local_rank is None:
        if m := _KV_RANK.search(rest, 0, 200):
            p.rank = int(m.group(1))
        elif m := _LOCAL_KV.search(rest, 0, 200):
            p.local_rank = int(m.group(1))
    return p


# -- file names ---------------------------------------------------------------------------------------

_FILE_RANK = re.compile(r"(?i)(?:^|[^a-z])(?:global_)?rank[-_.]?(\d+)")
_FILE_NODE = re.compile(r"(?i)((?:node|host|gpu|worker|compute|nid)[-_]?[a-z0-9-]*?\d+)")


def parse_file_name(name: str) -> tuple[int | None, str | None]:
    """(rank, node) a file name carries: rank17.log, train-rank_3.out, node02.log, logs/node02/rank9.txt."""
    base = name.replace("\\", "/")
    rank = node = None
    if m := _FILE_RANK.search(base.rsplit("/", 1)[-1]) or _FILE_RANK.search(base):
        rank = int(m.group(1))
    if m := _FILE_NODE.search(base):
        node = m.group(1)
    return rank, node


_TORCHRUN_LOG_DIR = re.compile(r"attempt_\d+/(\d+)/(?:stdout|stderr|error)\.(?:log|txt|json)$")


def local_rank_of_file(name: str) -> int | None:
    """torchrun --log-dir writes <run>/attempt_<n>/<local_rank>/stderr.log: the local rank."""
    m = _TORCHRUN_LOG_DIR.search(name.replace("\\", "/"))
    return int(m.group(1)) if m else None


# -- timestamps ---------------------------------------------------------------------------------------

_MONTHS = {m: i for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)}
_GLOG_TS = re.compile(r"\b[EWIF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?")
_ISO_TS = re.compile(r"\b\d{4}-(\d\d)-(\d\d)[T _](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?")
_SYSLOG_TS = re.compile(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(\d{1,2}) (\d\d):(\d\d):(\d\d)")
_SHORT_TS = re.compile(r"\b(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?")


def parse_timestamp(text: str) -> tuple[float, str] | None:
    """(sort key in seconds, "HH:MM:SS") from the first timestamp near the start of `text`.

    Years are ignored (glog omits them) and time zones too: keys compare lines of one job.
    """
    head = text[:120]
    best = None
    for regex in (_GLOG_TS, _ISO_TS, _SYSLOG_TS, _SHORT_TS):
        m = regex.search(head)
        if m and (best is None or m.start() < best[0].start()):
            best = (m, regex)
    if best is None:
        return None
    m, regex = best
    g = m.groups()
    month = _MONTHS[g[0]] if regex is _SYSLOG_TS else int(g[0])
    day, hh, mm, ss = int(g[1]), int(g[2]), int(g[3]), int(g[4])
    frac = float("0." + g[5]) if len(g) > 5 and g[5] else 0.0
    key = ((month * 32 + day) * 24 + hh) * 3600 + mm * 60 + ss + frac
    return key, f"{hh:02d}:{mm:02d}:{ss:02d}"


# -- fields -------------------------------------------------------------------------------------------

WORK = re.compile(r"WorkNCCL\(SeqNum=(\d+), OpType=(\w+)")
STATUS = re.compile(
    r"(?:work sequence id: (\d+) PG status: last enqueued work: (-?\d+), last completed work: (-?\d+)"
    r"|(?:detected by watchdog at work|Timeout at NCCL work): (\d+), last enqueued NCCL work: (-?\d+), last completed NCCL work: (-?\d+))"
)
DUMP_FROM = re.compile(r"collective timeout from rank (\d+)")
DESYNC_RANKS = re.compile(r"\[([\d, ]+)\] (joined but didn't finish|finished collective|are the lagging ranks)|ranks \[([\d, ]+)\] are the lagging")
NCCL_COMM = re.compile(r"comm 0x[0-9a-fA-F]+ rank (\d+) n[Rr]anks (\d+)(?:.*?busId ([0-9a-fA-F]+))?")
XID = re.compile(r"Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+)(?:, pid=(\d+))?")
ELASTIC_RANK = re.compile(r"rank\s+: (\d+) \(local_rank: (\d+)\)")
EXCEPTION_NAME = re.compile(r"\b((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)): ")
WORLD = re.compile(r"(?i)world[_ ]size\W{1,3}(\d+)|with (\d+) nodes")
VERSION_FIELDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("nccl", re.compile(r"NCCL version (\d+\.\d+\.\d+)")),
    ("cuda", re.compile(r"NCCL version [\d.]+\+cuda(\d+\.\d+)")),
    ("torch", re.compile(r"(?:PyTorch|torch)(?: version)?(?:==|: |\s+)v?(\d+\.\d+\.\d+(?:[+.\w]*)?)")),
    ("cuda", re.compile(r"(?:CUDA Version|CUDA used to build PyTorch|CUDA runtime version): (\d+\.\d+)")),
    ("driver", re.compile(r"(?:Driver Version|Nvidia driver version): (\d+\.\d+(?:\.\d+)?)|Kernel Module\s+(\d+\.\d+(?:\.\d+)?)")),
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
