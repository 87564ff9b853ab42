"""The one table of failure kinds: what a log line says happened, as triage names it and as the
summary and the renderers word it.

`label` is the noun phrase of the rank table ("CUDA out of memory"); `root` is what a failing rank
did ("ran out of GPU memory"); `collateral` is what ranks hit by another's failure did ("timed out
waiting"). Kinds the rules assign and kinds triage infers (stalled, checkpoint, silent) are both
here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    label: str
    root: str = ""
    collateral: str = ""


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        # collateral: ranks that fail because another did
        Kind("watchdog-timeout", "watchdog timeout", collateral="timed out waiting"),
        Kind(
            "remote-error",
            "NCCL remote error (peer exited)",
            collateral="saw NCCL remote errors (a peer exited)",
        ),
        Kind(
            "nccl-aborted",
            "NCCL communicator aborted",
            collateral="aborted their NCCL communicators",
        ),
        Kind(
            "store-error", "TCPStore connection lost", collateral="lost their TCPStore connection"
        ),
        Kind(
            "heartbeat",
            "NCCL heartbeat monitor kill",
            collateral="were stopped by the NCCL heartbeat monitor",
        ),
        Kind(
            "sigterm",
            "stopped by the launcher (SIGTERM)",
            collateral="were stopped by the launcher (SIGTERM)",
        ),
        Kind(
            "elastic", "reported failed by torchrun", collateral="were reported failed by torchrun"
        ),
        Kind("dump-signal", "told to dump NCCL state", collateral="were told to dump NCCL state"),
        Kind(
            "watchdog-status", "NCCL watchdog failure", collateral="reported NCCL watchdog failures"
        ),
        Kind(
            "desync",
            "collective desync report",
            root="issued a different collective",
            collateral="reported a collective desync",
        ),
        # root causes
        Kind("oom", "CUDA out of memory", root="ran out of GPU memory"),
        Kind("xid", "GPU Xid error", root="hit a GPU Xid error"),
        Kind("ecc", "uncorrectable ECC error", root="hit an uncorrectable ECC error"),
        Kind("illegal-memory-access", "illegal memory access", root="hit an illegal memory access"),
        Kind("device-assert", "device-side assert", root="hit a device-side assert"),
        Kind("dataloader", "DataLoader worker died", root="lost a DataLoader worker"),
        Kind("io", "file I/O error", root="failed on file I/O"),
        Kind("host-oom", "killed by the host OOM killer", root="was killed by the host OOM killer"),
        Kind("segfault", "segmentation fault", root="crashed with a segmentation fault"),
        Kind("cuda-error", "CUDA error", root="hit a CUDA error"),
        Kind("network", "network error", root="hit a network error"),
        Kind("exception", "exception", root="raised an exception"),
        # inferred by triage from what the other ranks say
        Kind("stalled", "never reached the collective", root="never reached the collective"),
        Kind("checkpoint", "still saving a checkpoint", root="was still saving a checkpoint"),
        Kind("silent", "logged nothing", root="logged nothing"),
    )
}

LABEL = {name: k.label for name, k in KINDS.items()}
ROOT_PHRASE = {name: k.root for name, k in KINDS.items() if k.root}
COLLATERAL_PHRASE = {name: k.collateral for name, k in KINDS.items() if k.collateral}
# the order collateral groups are listed in when they are equally large
COLLATERAL_ORDER = (
    "watchdog-timeout", "remote-error", "nccl-aborted", "store-error", "heartbeat",
    "desync", "dump-signal", "watchdog-status", "elastic", "sigterm",
)  # fmt: skip
HARDWARE = ("xid", "ecc")  # a GPU's own fault: outranks a software error on the same node
NODE_LEVEL = ("xid", "ecc", "host-oom", "segfault")  # attributed by node when no rank is named
# what a GPU fault causes
DEVICE_ERRORS = (
    "xid",
    "ecc",
    "illegal-memory-access",
    "cuda-error",
    "oom",
)
INFERRED = ("stalled", "checkpoint", "silent", "desync")  # the kinds triage infers across ranks
