"""What a log file's name and a host name say: the node, rank and local rank a file holds
(`parse_source_name`), and host names compared across sources (`node_key`, `same_node`)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Origin:
    """What a file's name says about its lines."""

    source: str  # the name as given
    node: str | None = None
    rank: int | None = None
    local_rank: int | None = None
    kernel: bool = False  # dmesg / syslog / journal: node-level lines


_FILE_RANK = re.compile(r"(?i)(?:^|[^a-z])(?:global_)?rank[-_.]?(\d{1,7})")
# Kubeflow / Kubernetes pod names: <job>-master-0, <job>-worker-3, <job>-launcher-0
_POD_NAME = re.compile(
    r"(?i)[a-z0-9][a-z0-9.-]{0,200}?-(?:master|worker|launcher|chief|ps|evaluator|head)-\d{1,6}(?![0-9])"
)
_FILE_NODE = re.compile(
    r"(?i)((?:node|host|worker|compute|nid|gpu)[-_]?[a-z0-9-]{0,40}?\d{1,6})(?![0-9])"
)
_KERNEL_FILE = re.compile(r"(?i)dmesg|kern(?:el)?[-_.]|syslog|journal|messages")
_TORCHRUN_LOG_DIR = re.compile(
    r"attempt_\d{1,6}/(\d{1,7})/(?:stdout|stderr|error)\.(?:log|txt|json)$"
)


def parse_source_name(name: str) -> Origin:
    """The node, rank and kind a file's path carries: rank17.log, logs/node02/rank9.txt,
    trainer-worker-2.log, node03-dmesg.txt, <run>/attempt_0/3/stderr.log (torchrun --log-dir)."""
    path = name.replace("\\", "/")
    base = path.rsplit("/", 1)[-1]
    rank = node = local = None
    if m := _FILE_RANK.search(base) or _FILE_RANK.search(path):
        rank = int(m.group(1))
    if m := _POD_NAME.search(base) or _POD_NAME.search(path):
        node = m.group(0)
    elif m := _FILE_NODE.search(base) or _FILE_NODE.search(path):
        node = m.group(1)
    if rank is None and (m := _TORCHRUN_LOG_DIR.search(path)):
        local = int(m.group(1))
    return Origin(
        source=name, node=node, rank=rank, local_rank=local, kernel=bool(_KERNEL_FILE.search(base))
    )


def node_key(node: str) -> str:
    """A host name as compared across sources: lower case, without its domain (an IP stays
    whole)."""
    node = node.lower()
    if node.replace(".", "").isdigit() or ":" in node:
        return node
    return node.split(".", 1)[0]


def same_node(a: str | None, b: str | None) -> bool:
    """Two names for one machine: equal hosts, or a pod and the short name a file gives it
    ("trainer-worker-2" and "worker-2")."""
    if not a or not b:
        return False
    a, b = node_key(a), node_key(b)
    return a == b or a.endswith("-" + b) or b.endswith("-" + a)
