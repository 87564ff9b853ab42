"""The line-classification table: which lines are a rank's own failure, which are collateral.

The table (`RULES`) sorts lines into root-type errors (a rank's own failure: OOM, Xid, illegal
memory access, a data-loader death, ...), collateral-type errors (what survivors print when a peer
dies: watchdog timeouts, aborted communicators, SIGTERM from the agent) and a few informative lines
(versions, world size, NCCL rank maps, what a rank was busy with). All rules are compiled once into
one `MultiScanner`, so a 10 MB log is classified in one linear pass; the field parsers
(bot.triage.fields) only ever run on the few lines the scanner picked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from bot.settings import hyperscan_cache_dir
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
    Rule(
        "oom",
        "root",
        "oom",
        r"CUDA out of memory|OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED|CUDA error: out of memory|"
        r"Cuda failure '?out of memory",
    ),
    Rule("xid", "root", "xid", r"NVRM: Xid \(PCI:[0-9a-fA-F:.]+\): \d+"),
    Rule("gpu-lost", "root", "xid", r"GPU has fallen off the bus|: GPU is lost"),
    Rule("ecc", "root", "ecc", r"uncorrectable ECC error"),
    Rule(
        "illegal-memory",
        "root",
        "illegal-memory-access",
        r"an illegal memory access was encountered|misaligned address|an illegal instruction was "
        r"encountered",
    ),
    Rule(
        "device-assert",
        "root",
        "device-assert",
        r"device-side assert triggered|thread: \[\d+,\d+,\d+\] Assertion",
    ),
    Rule(
        "dataloader",
        "root",
        "dataloader",
        r"DataLoader worker \(pid|Unexpected bus error encountered in worker|DataLoader timed out "
        r"after \d+ seconds|[Pp]in memory thread exited unexpectedly",
    ),
    Rule(
        "io",
        "root",
        "io",
        r"(?:OSError|IOError|FileNotFoundError|PermissionError): \[Errno \d+\]|No space left on "
        r"device|Input/output error|Stale file handle|Disk quota exceeded|Read-only file system",
    ),
    Rule(
        "host-oom",
        "root",
        "host-oom",
        r"[Oo]ut of memory: Kill(?:ed)? process \d+|invoked oom-killer",
    ),
    # the last alternative is the kernel's own line: "python[4242]: segfault at 0 ip ... error 4 in
    # ..."
    Rule(
        "segfault",
        "root",
        "segfault",
        r"Segmentation fault \(core dumped\)|Fatal Python error: Segmentation fault|Caught signal "
        r"11 \(Segmentation fault|\]: segfault at [0-9a-f]+ ip ",
    ),
    Rule(
        "cuda-error",
        "root",
        "cuda-error",
        r"CUDA error: |unhandled cuda error|Cuda failure '|CUDA driver error",
        strong=False,
    ),
    Rule(
        "network",
        "root",
        "network",
        r"NCCL WARN NET/|transport retry counter exceeded|unhandled system error",
        strong=False,
    ),
    Rule("exception", "root", "exception", r"\w(?:Error|Exception): ", strong=False),
    # -- collateral-type: what survivors print -----------------------------------------------------
    Rule(
        "watchdog-timeout",
        "collateral",
        "watchdog-timeout",
        r"Watchdog caught collective operation timeout",
    ),
    Rule(
        "watchdog-status",
        "collateral",
        "watchdog-status",
        r"failure detected by watchdog at work sequence id|detected by watchdog at work: \d+|"
        r"Timeout at NCCL work: \d+",
    ),
    Rule(
        "nccl-aborted",
        "collateral",
        "nccl-aborted",
        r"Some NCCL operations have failed or timed out|we are taking the entire process down|"
        r"Process group watchdog thread terminated with exception|NCCL communicator was aborted|"
        r"DistBackendError",
    ),
    Rule(
        "remote-error",
        "collateral",
        "remote-error",
        r"remote process exited or there was a network error|ncclRemoteError|Connection closed by "
        r"remote peer|Connection closed by peer",
    ),
    Rule(
        "store-error",
        "collateral",
        "store-error",
        r"recvValue failed|recvBytes failed|sendBytes failed|Failed to recv, got 0 bytes|"
        r"DistStoreError|DistNetworkError|Connection reset by peer|Broken pipe",
    ),
    Rule(
        "heartbeat",
        "collateral",
        "heartbeat",
        r"Heartbeat monitor timed out|watchdog got stuck for",
    ),
    Rule(
        "dump-signal",
        "collateral",
        "dump-signal",
        r"Received a dump signal due to a collective timeout from",
    ),
    Rule(
        "sigterm",
        "collateral",
        "sigterm",
        r"closing signal SIG(?:TERM|KILL)|got signal: \d+|Received Signals\.SIG\w+ death signal|"
        r"Received \d+ death signal|SignalException|Signal 15 \(SIGTERM\) received",
    ),
    Rule(
        "elastic",
        "collateral",
        "elastic",
        r"ChildFailedError|failed \(exitcode: -?\d+\) local_rank: \d+ \(pid: \d+\)",
    ),
    Rule(
        "desync",
        "collateral",
        "desync",
        r"caused the desync are|are the lagging ranks that caused this timeout|joined but didn't "
        r"finish collective #|but didn't join collective #|Detected mismatch between collectives "
        r"on ranks",
    ),
    # -- informative lines -------------------------------------------------------------------------
    Rule("elastic-root", "info", "elastic-root", r"Root Cause \(first observed failure\)"),
    Rule("elastic-rank", "info", "elastic-rank", r"rank\s+: \d+ \(local_rank: \d+\)"),
    Rule("nccl-comm", "info", "nccl-comm", r"NCCL INFO comm 0x[0-9a-fA-F]+ rank \d+ n[Rr]anks \d+"),
    Rule("nccl-version", "info", "version", r"NCCL version \d+\.\d+\.\d+"),
    Rule(
        "torch-version",
        "info",
        "version",
        r"(?:PyTorch|torch)(?: version)?(?:==|: |\s+)v?\d+\.\d+\.\d+",
    ),
    Rule(
        "cuda-version",
        "info",
        "version",
        r"CUDA Version: \d+\.\d+|CUDA used to build PyTorch: \d+\.\d+|CUDA runtime version: "
        r"\d+\.\d+",
    ),
    Rule(
        "driver-version",
        "info",
        "version",
        r"Driver Version: \d+\.\d+|Kernel Module\s+\d+\.\d+|Nvidia driver version: \d+\.\d+",
    ),
    Rule(
        "world-size",
        "info",
        "world-size",
        r"(?:world_size|WORLD_SIZE|[Ww]orld size)\W{1,3}\d+|Completed store-based barrier for "
        r"key:\S+ with \d+ nodes",
    ),
    Rule(
        "checkpoint",
        "info",
        "activity",
        r"[Ss]av(?:e|ing) (?:the )?(?:model |sharded |distributed |full )?(?:state[_ ]dict|"
        r"checkpoint)|dcp\.(?:async_)?save|save_checkpoint\(",
    ),
    Rule("eval", "info", "activity", r"[Rr]unning [Ee]valuation"),
)

RULE_INDEX = {rule.name: i for i, rule in enumerate(RULES)}


# Streaming triage scans 8 MB chunks that are mostly noise: it asks the scanner for end offsets
# (MultiScanner.scan_offsets) and counts lines only around the few hits.
@cache
def line_scanner() -> MultiScanner:
    """All rules in one multi-pattern scanner, compiled once per process."""
    return MultiScanner([rule.pattern for rule in RULES], cache_dir=hyperscan_cache_dir())


@cache  # a handful of distinct rule sets recur over millions of lines
def classify(rule_ids: tuple[int, ...]) -> tuple[Role, str, bool] | None:
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


@cache
def rule_regex(name: str) -> re.Pattern[str]:
    """One rule's pattern for Python's re (the patterns are RE2-compatible: no backtracking traps),
    to find where on a picked line the rule matched."""
    return re.compile(RULES[RULE_INDEX[name]].pattern)
