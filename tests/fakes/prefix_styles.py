"""One failing job written the way each launcher and collector prints it, for triage tests and the
benchmark.

The job: `world` ranks on nodes of `per_node` GPUs; rank `culprit` runs out of GPU memory at
12:03:11, the others' NCCL watchdogs fire ten minutes later. The same lines are then wrapped as
each tool wraps them (formats from the tools' sources: kubectl's "[pod/%s/%s] " and RFC 3339
nanosecond stamps, torchrun's "[default%d]:", srun's "%*d: ", Open MPI's "[%d,%d]<stderr>:",
pdsh's "host: ", Ray's "(Actor pid=%d, ip=%s) "). Nothing is copied from a real log.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from bot.model import LogFile
from tests.fakes.scenarios import chatter, clock, nccl_startup, oom_lines, timed, watchdog_block

STYLES = ("rank", "kubectl-timestamps", "kubectl-prefix", "torchrun-tee", "srun-label", "mpi-tag-output", "pdsh", "ray")
T_FAIL = 191.2


@dataclass(frozen=True)
class Rank:
    rank: int
    local: int
    node: str  # host name
    pod: str
    pid: int
    ip: str


def ranks(world: int, per_node: int) -> list[Rank]:
    out = []
    for r in range(world):
        n = r // per_node
        out.append(Rank(r, r % per_node, f"node{n + 1:02d}", f"trainer-worker-{n}", 41230 + r, f"10.0.{n}.{10 + r % per_node}"))
    return out


def rfc3339(t: float) -> str:
    """kubelet's --timestamps: RFC 3339 with nanoseconds, UTC."""
    hh, mm, ss, us = clock(t)
    return f"2026-12-02T{hh:02d}:{mm:02d}:{ss:02d}.{us:06d}{int(t * 1e9) % 1000:03d}Z"


def own_lines(r: Rank, world: int, culprit: int, *, torch_prefix: bool, pad: int, rng: random.Random) -> list[tuple[float, str]]:
    """What one rank's process prints, before any launcher wraps it."""
    p = f"[rank{r.rank}]:" if torch_prefix else ""
    lines = nccl_startup(r.node, r.pid, r.local, r.rank, world, 2.0 + r.rank * 0.003)
    lines += chatter(r.rank, p, 5.0, T_FAIL - 0.5, rng, 8600)
    for i in range(pad):  # bulk for the benchmark: step output between start-up and the failure
        lines.append((5.0 + i * 1e-4, f"{p}step={8000 + i} loss={rng.uniform(1.8, 2.6):.4f} tokens/s={rng.randint(3100, 3400)}"))
    if r.rank == culprit:
        lines += timed(T_FAIL, oom_lines(f"{p} " if p else "", r.local, r.pid))
    else:
        t = T_FAIL + 600.3 + r.rank * 0.002
        lines += timed(t, watchdog_block(r.rank, t, r.pid, 8812, "ALLREDUCE", style="2.4" if torch_prefix else "2.1"))
    return lines


def styled_job(style: str, *, world: int = 8, per_node: int = 4, culprit: int = 5, pad: int = 0, seed: int = 0) -> list[LogFile]:
    """The job's logs as `style` delivers them."""
    rng = random.Random(seed)
    torch_prefix = style in ("rank", "kubectl-timestamps", "kubectl-prefix", "pdsh")
    everyone = ranks(world, per_node)
    own = {r.rank: own_lines(r, world, culprit, torch_prefix=torch_prefix, pad=pad, rng=rng) for r in everyone}
    width = len(str(world - 1))

    def wrap(r: Rank, t: float, line: str) -> str:
        if style == "kubectl-timestamps":
            return f"{rfc3339(t)} {line}"
        if style == "kubectl-prefix":
            return f"[pod/{r.pod}/pytorch] {rfc3339(t)} {line}"
        if style == "torchrun-tee":
            return f"[default{r.local}]:{line}"
        if style == "srun-label":
            return f"{r.rank:>{width}}: {line}"
        if style == "mpi-tag-output":
            return f"[1,{r.rank}]<stderr>:{line}"
        if style == "pdsh":
            return f"worker-{r.rank // per_node}: {line}"
        if style == "ray":
            return f"(RayTrainWorker pid={r.pid}, ip={r.ip}) {line}"
        return line

    def merged(members: list[Rank]) -> str:
        lines = sorted((t, r.rank, i, wrap(r, t, x)) for r in members for i, (t, x) in enumerate(own[r.rank]))
        return "\n".join(x[3] for x in lines) + "\n"

    if style == "rank":
        return [LogFile(name=f"rank{r.rank}.log", text="\n".join(x for _, x in own[r.rank]) + "\n") for r in everyone]
    if style in ("kubectl-timestamps", "torchrun-tee"):  # one file per pod / node
        by_node: dict[str, list[Rank]] = {}
        for r in everyone:
            by_node.setdefault(r.pod if style.startswith("kubectl") else r.node, []).append(r)
        return [LogFile(name=f"{name}.log", text=merged(members)) for name, members in by_node.items()]
    name = {"kubectl-prefix": "kubectl-logs.txt", "srun-label": "slurm-4242.out", "mpi-tag-output": "mpirun.log",
            "pdsh": "ds-launch.log", "ray": "ray-job.log"}[style]
    return [LogFile(name=name, text=merged(everyone))]
