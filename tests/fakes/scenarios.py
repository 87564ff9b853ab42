"""Write realistic multi-rank failure logs for triage tests and benchmarks.

Every line is composed here in the formats the software prints (PyTorch c10d glog lines and their
torchrun "[rank3]:" / "[default3]:" prefixes, the excepthook's "[rank3]: " traceback prefix, NCCL
"host:pid:tid [dev]" lines, srun --label, Python logging, torchrun's elastic summary, kernel syslog
Xid lines); no line is copied from a real log. A scenario is a list of LogFile plus what triage must
conclude about it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from bot.model import LogFile

DAY = (12, 2)  # December 2nd; years are not printed by glog
BUS_IDS = ("18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000")


@dataclass(frozen=True)
class Expect:
    rank: int | None  # the initiating rank (None with no single initiator)
    kind: str  # kind of the initiating error, or the shared kind when no single initiator
    collateral: int  # number of collateral ranks
    family: frozenset[str]  # acceptable KB entry ids for the whole pipeline
    no_single: bool = False
    failing: int = 0  # ranks with their own root-type error besides the initiator


@dataclass
class Scenario:
    name: str
    files: list[LogFile]
    expect: Expect

    def write(self, directory: Path) -> list[Path]:
        paths = []
        for f in self.files:
            path = directory / f.name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f.text)
            paths.append(path)
        return paths


# -- line formats ------------------------------------------------------------------------------------


def clock(t: float) -> tuple[int, int, int, int]:
    """Seconds after 12:00:00 -> (hh, mm, ss, microseconds)."""
    whole = int(t)
    return 12 + whole // 3600, whole // 60 % 60, whole % 60, int((t - whole) * 1e6)


def glog(level: str, t: float, pid: int, src: str, message: str, nanos: bool = False) -> str:
    hh, mm, ss, us = clock(t)
    frac = f"{us:06d}{pid % 1000:03d}" if nanos else f"{us:06d}"
    return f"[{level}{DAY[0]:02d}{DAY[1]:02d} {hh:02d}:{mm:02d}:{ss:02d}.{frac} {pid} {src}] {message}"


def iso(t: float, sep: str = " ", comma: bool = True) -> str:
    hh, mm, ss, us = clock(t)
    return f"2025-{DAY[0]:02d}-{DAY[1]:02d}{sep}{hh:02d}:{mm:02d}:{ss:02d}{',' if comma else '.'}{us // 1000:03d}"


def syslog(t: float, host: str, message: str) -> str:
    hh, mm, ss, _ = clock(t)
    return f"Dec  {DAY[1]} {hh:02d}:{mm:02d}:{ss:02d} {host} kernel: {message}"


PGNCCL = "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp"


def watchdog_block(rank: int, t: float, pid: int, seq: int, op: str, *, numel: int = 1048576,
                   timeout_ms: int = 600000, style: str = "2.4", completed: int | None = None) -> list[str]:
    """What one surviving rank prints when its watchdog times a collective out."""
    completed = seq - 1 if completed is None else completed
    ran = timeout_ms + 40 + rank
    work = f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)={timeout_ms})"
    if style == "2.1":  # no rank prefix (srun launches ranks), older status wording
        return [
            glog("E", t, pid, "ProcessGroupNCCL.cpp:475", f"[Rank {rank}] Watchdog caught collective operation timeout: {work} ran for {ran} milliseconds before timing out."),
            glog("E", t, pid, "ProcessGroupNCCL.cpp:489", f"[Rank {rank}] Timeout at NCCL work: {seq}, last enqueued NCCL work: {seq}, last completed NCCL work: {completed}."),
            glog("E", t, pid, "ProcessGroupNCCL.cpp:489", f"[Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data."),
            glog("E", t, pid, "ProcessGroupNCCL.cpp:495", f"[Rank {rank}] To avoid data inconsistency, we are taking the entire process down."),
            "terminate called after throwing an instance of 'std::runtime_error'",
            f"  what():  [Rank {rank}] NCCL watchdog thread terminated with exception: [Rank {rank}] Watchdog caught collective operation timeout: {work} ran for {ran} milliseconds before timing out.",
        ]
    p = f"[rank{rank}]:"
    if style == "2.5":
        pg = f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}]"
        status = f"{pg}  failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: {seq}, last completed work: {completed}"
        nanos = True
    else:
        pg = f"[PG 0 Rank {rank}]"
        status = f"{pg} Exception (either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq}, last completed NCCL work: {completed}."
        nanos = False
    return [
        p + glog("E", t, pid, f"{PGNCCL}:632", f"[Rank {rank}] Watchdog caught collective operation timeout: {work} ran for {ran} milliseconds before timing out.", nanos),
        p + glog("E", t, pid, f"{PGNCCL}:1664", status, nanos),
        p + glog("E", t, pid, f"{PGNCCL}:680", f"[Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.", nanos),
        p + glog("E", t, pid, f"{PGNCCL}:686", f"[Rank {rank}] To avoid data inconsistency, we are taking the entire process down.", nanos),
        p + glog("E", t, pid, f"{PGNCCL}:1515", f"{pg} Process group watchdog thread terminated with exception: [Rank {rank}] Watchdog caught collective operation timeout: {work} ran for {ran} milliseconds before timing out.", nanos),
        f"Exception raised from checkTimeout at ../{PGNCCL}:634 (most recent call first):",
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3a2c5d8446 in /usr/local/lib/python3.11/site-packages/torch/lib/libc10.so)",
        "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f3a2d8a1772 in /usr/local/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)",
        "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f3a2d8a81d3 in /usr/local/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)",
        "",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
    ]


def traceback(prefix: str, frames: list[tuple[str, int, str, str]], final: list[str]) -> list[str]:
    out = [f"{prefix}Traceback (most recent call last):"]
    for path, line, func, code in frames:
        out += [f'{prefix}  File "{path}", line {line}, in {func}', f"{prefix}    {code}"]
    return out + [prefix + x for x in final]


SITE = "/usr/local/lib/python3.11/site-packages"
TRAIN_FRAMES = [
    ("/workspace/train.py", 412, "<module>", "main()"),
    ("/workspace/train.py", 371, "main", "loss = train_step(model, batch, optimizer)"),
    ("/workspace/train.py", 298, "train_step", "outputs = model(**batch)"),
    (f"{SITE}/torch/nn/modules/module.py", 1736, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)"),
    (f"{SITE}/torch/nn/parallel/distributed.py", 1643, "forward", "else self._run_ddp_forward(*inputs, **kwargs)"),
    (f"{SITE}/transformers/models/llama/modeling_llama.py", 1190, "forward", "logits = logits.float()"),
]


def oom_lines(prefix: str, gpu: int, pid: int) -> list[str]:
    return traceback(prefix, TRAIN_FRAMES, [
        (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB. GPU {gpu} has a total capacity of 79.15 GiB "
        f"of which 3.12 GiB is free. Process {pid} has 76.02 GiB memory in use. Of the allocated memory 69.47 GiB is allocated "
        "by PyTorch, and 5.06 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
        "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
        "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"),
    ])


def nccl_startup(host: str, pid: int, dev: int, rank: int, world: int, t: float) -> list[tuple[float, str]]:
    head = f"{host}:{pid}:{pid}"
    comm = f"{host}:{pid}:{pid + 57}"
    lines = [
        f"{head} [{dev}] NCCL INFO cudaDriverVersion 12040",
        f"{head} [{dev}] NCCL INFO Bootstrap : Using eth0:10.0.{host[-1]}.{10 + dev}<0>",
        f"{comm} [{dev}] NCCL INFO comm 0x55d1c2a3b{rank:03x} rank {rank} nranks {world} cudaDev {dev} nvmlDev {dev} busId {BUS_IDS[dev]} commId 0x7d2c1f0e9a3b4c5d - Init COMPLETE",
    ]
    if rank == 0:
        lines.insert(1, f"{head} [{dev}] NCCL INFO NCCL version 2.20.5+cuda12.4")
    return [(t + i * 0.01, x) for i, x in enumerate(lines)]


def elastic_summary(t: float, host: str, rank: int, local: int, pid: int, exitcode: int, agent_pid: int,
                    others: list[int]) -> list[str]:
    hh, mm, ss, _ = clock(t)
    stamp = f"2025-12-02_{hh:02d}:{mm:02d}:{ss:02d}"
    out = [glog("W", t, agent_pid, "torch/distributed/elastic/multiprocessing/api.py:897", f"Sending process {p} closing signal SIGTERM") for p in others]
    out += [
        glog("E", t + 1, agent_pid, "torch/distributed/elastic/multiprocessing/api.py:869", f"failed (exitcode: {exitcode}) local_rank: {local} (pid: {pid}) of binary: /usr/bin/python3"),
        "Traceback (most recent call last):",
        '  File "/usr/local/bin/torchrun", line 8, in <module>',
        "    sys.exit(main())",
        f'  File "{SITE}/torch/distributed/launcher/api.py", line 263, in launch_agent',
        "    raise ChildFailedError(",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        "train.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "  <NO_OTHER_FAILURES>",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        f"  time      : {stamp}",
        f"  host      : {host}",
        f"  rank      : {rank} (local_rank: {local})",
        f"  exitcode  : {exitcode} (pid: {pid})",
        "  error_file: <N/A>",
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
        "============================================================",
    ]
    return out


def chatter(rank: int, prefix: str, t0: float, t1: float, rng: random.Random, step0: int) -> list[tuple[float, str]]:
    """Ordinary training output between start-up and failure."""
    out = []
    step = step0
    t = t0
    while t < t1:
        if rank == 0:
            out.append((t, f"{prefix}[{iso(t)}] [INFO] [engine.py:2201:step] step={step}, skipped=0, lr=[2.9e-05], mom=[(0.9, 0.95)]"))
            out.append((t + 0.001, f"{prefix}{{'loss': {rng.uniform(1.8, 2.6):.4f}, 'grad_norm': {rng.uniform(0.2, 0.9):.4f}, 'learning_rate': 2.9e-05, 'epoch': 0.{step % 97:02d}}}"))
        else:
            out.append((t, f"{prefix}[{iso(t)}] [INFO] [logging.py:128:log_dist] [Rank {rank}] step={step} tokens/s={rng.randint(3100, 3400)}"))
        step += 1
        t += 0.85 + rng.random() * 0.1
    return out


def layout(name: str, per_rank: dict[int, list[tuple[float, str]]], *, interleaved: bool,
           extra: dict[str, list[tuple[float, str]]] | None = None, file_name=lambda r: f"rank{r}.log") -> list[LogFile]:
    """Per-rank files, or one file with every rank's lines merged in time order."""
    files: list[LogFile] = []
    if interleaved:
        merged = sorted((t, i, line) for lines in per_rank.values() for i, (t, line) in enumerate(lines))
        for extra_name, lines in (extra or {}).items():
            merged += [(t, 10**9 + i, line) for i, (t, line) in enumerate(lines)]
        merged.sort(key=lambda x: (x[0], x[1]))
        return [LogFile(name=f"{name}.log", text="\n".join(x[2] for x in merged) + "\n")]
    for rank in sorted(per_rank):
        files.append(LogFile(name=file_name(rank), text="\n".join(line for _, line in per_rank[rank]) + "\n"))
    for extra_name, lines in (extra or {}).items():
        files.append(LogFile(name=extra_name, text="\n".join(line for _, line in lines) + "\n"))
    return files


def timed(t: float, lines: list[str], step: float = 0.0005) -> list[tuple[float, str]]:
    return [(t + i * step, x) for i, x in enumerate(lines)]


def node_of(rank: int, per_node: int = 8) -> str:
    return f"node{rank // per_node + 1:02d}"


# -- scenarios ---------------------------------------------------------------------------------------

OOM_FAMILY = frozenset({"cuda-oom-activations-batch-too-large", "cuda-oom-fragmentation", "hf-eval-logits-accumulation-oom", "oom-memory-growth-retained-graph"})
TIMEOUT_FAMILY = frozenset({"nccl-watchdog-timeout", "nccl-watchdog-timeout-collective-desync", "nccl-watchdog-timeout-slow-rank"})


def oom_then_timeouts(*, world: int = 16, culprit: int = 11, interleaved: bool = False, seed: int = 0) -> Scenario:
    """One rank runs out of GPU memory; ten minutes later every other rank's watchdog fires."""
    rng = random.Random(seed)
    per_rank: dict[int, list[tuple[float, str]]] = {}
    t_fail = 191.2
    for r in range(world):
        pid, local, node = 41230 + r, r % 8, node_of(r)
        p = f"[rank{r}]:"
        lines = nccl_startup(node, pid, local, r, world, 2.0 + r * 0.003)
        lines += chatter(r, p, 5.0, t_fail - 0.5, rng, 8600)
        if r == culprit:
            lines += timed(t_fail, oom_lines(f"[rank{r}]: ", local, pid))
        else:
            lines += timed(t_fail + 600.3 + r * 0.002, watchdog_block(r, t_fail + 600.3 + r * 0.002, pid, 8812, "ALLREDUCE"))
        per_rank[r] = lines
    culprit_pid = 41230 + culprit
    agent = elastic_summary(t_fail + 603, node_of(culprit), culprit, culprit % 8, culprit_pid, 1, 41100,
                            [41230 + r for r in range(world) if node_of(r) == node_of(culprit) and r != culprit])
    extra = {f"torchrun-{node_of(culprit)}.log": timed(t_fail + 603, agent)}
    files = layout("train", per_rank, interleaved=interleaved, extra=extra)
    return Scenario("oom-interleaved" if interleaved else "oom-per-rank", files,
                    Expect(culprit, "oom", world - 1, OOM_FAMILY))


def xid79_with_nccl_errors(*, world: int = 16, culprit: int = 10, seed: int = 1) -> Scenario:
    """The GPU of one rank falls off the bus (Xid 79 in the node's kernel log); its peers see NCCL
    remote errors or time out. Logs: one file per node plus that node's kernel log."""
    rng = random.Random(seed)
    nodes: dict[str, list[tuple[float, str]]] = {}
    t_xid = 140.0
    for r in range(world):
        pid, local, node = 51200 + r, r % 8, node_of(r)
        p = f"[rank{r}]:"
        lines = nccl_startup(node, pid, local, r, world, 1.0 + r * 0.003)
        lines += chatter(r, p, 4.0, t_xid, rng, 3300)
        if r == culprit:
            lines += timed(t_xid + 0.8, traceback(f"{p} ", TRAIN_FRAMES[:3], [
                "RuntimeError: CUDA error: unspecified launch failure",
                "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
            ]))
        elif r % 3 == 0:
            lines += timed(t_xid + 600.5, watchdog_block(r, t_xid + 600.5, pid, 3307, "_REDUCE_SCATTER_BASE"))
        else:
            lines += timed(t_xid + 2.1 + r * 0.01, [
                f"{node}:{pid}:{pid + 61} [{local}] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer {node_of(culprit)}<{40000 + culprit}>",
                f"{node}:{pid}:{pid + 61} [{local}] NCCL INFO transport/net_socket.cc:527 -> 6",
            ] + traceback(f"{p} ", TRAIN_FRAMES[:3], [
                "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.20.5",
                "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
                "Last error:",
                f"socketProgress: Connection closed by remote peer {node_of(culprit)}<{40000 + culprit}>",
            ]))
        nodes.setdefault(node, []).extend(lines)
    bus = BUS_IDS[culprit % 8]
    pci = f"0000:{bus[:-3]}:00"
    kern = [
        (0.0, syslog(0.0, node_of(culprit), "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024")),
        (t_xid, syslog(t_xid, node_of(culprit), f"NVRM: GPU at PCI:{pci}: GPU-2f6c0b1e-7d41-3a52-9c1e-0b7a4d2e9f13")),
        (t_xid, syslog(t_xid, node_of(culprit), "NVRM: GPU Board Serial Number: 1654923012345")),
        (t_xid, syslog(t_xid, node_of(culprit), f"NVRM: Xid (PCI:{pci}): 79, pid={51200 + culprit}, name=python3, GPU has fallen off the bus.")),
        (t_xid, syslog(t_xid, node_of(culprit), "NVRM: GPU 0000:3a:00.0: GPU has fallen off the bus.")),
    ]
    files = []
    for node, lines in sorted(nodes.items()):
        lines.sort(key=lambda x: x[0])
        files.append(LogFile(name=f"{node}.log", text="\n".join(x for _, x in lines) + "\n"))
    files.append(LogFile(name=f"{node_of(culprit)}-kern.log", text="\n".join(x for _, x in kern) + "\n"))
    return Scenario("xid79", files, Expect(culprit, "xid", world - 1, frozenset({"gpu-fallen-off-bus-xid79"})))


def dataloader_worker_killed(*, world: int = 8, culprit: int = 5, seed: int = 2) -> Scenario:
    """A DataLoader worker of one rank is SIGKILLed (host RAM); the other ranks wait in the next
    all-reduce until the watchdog fires. One interleaved file with torchrun --tee "[defaultN]:"
    prefixes and the pre-2.2 glog format (no timestamps)."""
    rng = random.Random(seed)
    per_rank: dict[int, list[tuple[float, str]]] = {}
    t_fail = 95.0
    for r in range(world):
        23100 + r
        p = f"[default{r}]:"
        lines = [(1.0, f"{p}[{iso(1.0)}] [INFO] [comm.py:637:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl"),
                 (1.1, f"{p}[{iso(1.1)}] [INFO] world_size={world} local_rank={r}")]
        lines += chatter(r, p, 3.0, t_fail, rng, 1100)
        if r == culprit:
            loader = f"{SITE}/torch/utils/data/dataloader.py"
            lines += timed(t_fail, traceback(p, [
                (loader, 1243, "_try_get_data", "data = self._data_queue.get(timeout=timeout)"),
                ("/usr/lib/python3.11/multiprocessing/queues.py", 113, "get", "if not self._poll(timeout):"),
                (f"{SITE}/torch/utils/data/_utils/signal_handling.py", 73, "handler", "_error_if_any_worker_fails()"),
            ], ["RuntimeError: DataLoader worker (pid 88231) is killed by signal: Killed. ", "",
                "The above exception was the direct cause of the following exception:", ""]) + traceback(p, TRAIN_FRAMES[:2] + [
                (loader, 701, "__next__", "data = self._next_data()"),
                (loader, 1448, "_next_data", "idx, data = self._get_data()"),
            ], ["RuntimeError: DataLoader worker (pid(s) 88231) exited unexpectedly"]))
        else:
            lines += timed(t_fail + 1800.4, [p + x for x in [
                f"[E ProcessGroupNCCL.cpp:475] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1207, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=1800000) ran for 1800511 milliseconds before timing out.",
                "[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
                "[E ProcessGroupNCCL.cpp:495] To avoid data inconsistency, we are taking the entire process down.",
            ]])
        per_rank[r] = lines
    files = layout("deepspeed-train", per_rank, interleaved=True)
    family = frozenset({"dataloader-worker-killed-host-oom", "dataloader-worker-exited-unexpectedly", "host-ram-oom-killed-sigkill"})
    return Scenario("dataloader", files, Expect(culprit, "dataloader", world - 1, family))


def collective_desync(*, world: int = 8, culprit: int = 3, seed: int = 3) -> Scenario:
    """One rank takes a different code path and calls ALLGATHER where the others call ALLREDUCE:
    every rank times out, but at SeqNum 4410 they disagree on the op. srun --label output."""
    per_rank: dict[int, list[tuple[float, str]]] = {}
    rng = random.Random(seed)
    for r in range(world):
        pid = 61300 + r
        lines = [(0.5 + r * 0.01, f"{r}: {iso(0.5)} - INFO - rank={r} - init_process_group(backend='nccl', world_size={world})")]
        lines += chatter(r, f"{r}: ", 2.0, 60.0, rng, 4350)
        op, numel = ("ALLGATHER", 8) if r == culprit else ("ALLREDUCE", 4194304)
        t = 660.0 + r * 0.01 + (0.4 if r == culprit else 0.0)
        lines += timed(t, [f"{r}: {x}" for x in watchdog_block(r, t, pid, 4410, op, numel=numel, style="2.1")])
        per_rank[r] = lines
    files = layout("slurm-88123", per_rank, interleaved=True)
    return Scenario("desync", files, Expect(culprit, "desync", world - 1, frozenset({"nccl-watchdog-timeout-collective-desync"})))


def rank0_saving_checkpoint(*, world: int = 16, seed: int = 4) -> Scenario:
    """Rank 0 writes a checkpoint to slow shared storage while the others enter the next
    all-reduce; their watchdogs fire, rank 0's never does. Per-rank files, Python logging with
    rank= fields, PyTorch 2.5 watchdog wording."""
    per_rank: dict[int, list[tuple[float, str]]] = {}
    for r in range(world):
        pid, node = 70100 + r, node_of(r)
        lines = [(1.0, f"{iso(1.0)} - INFO - rank={r} - torch 2.5.1+cu124, world_size={world}, node={node}")]
        lines += [(2.0 + i, f"{iso(2.0 + i)} - INFO - rank={r} - step {8996 + i} loss {2.1 - i * 0.01:.3f}") for i in range(4)]
        if r == 0:
            lines += [(6.0, f"{iso(6.0)} - INFO - rank=0 - Saving checkpoint to /mnt/lustre/ckpt/step_9000 with dcp.save (FULL_STATE_DICT, 141 GB)"),
                      (6.1, f"{iso(6.1)} - INFO - rank=0 - dcp.save: writing 1128 shards to /mnt/lustre/ckpt/step_9000")]
        else:
            lines += [(6.0, f"{iso(6.0)} - INFO - rank={r} - step 9000 done, waiting for checkpoint barrier")]
            t = 606.2 + r * 0.003
            lines += timed(t, watchdog_block(r, t, pid, 9001, "ALLREDUCE", style="2.5", completed=9000))
        per_rank[r] = lines
    files = layout("ckpt", per_rank, interleaved=False, file_name=lambda r: f"job-4417/out.{r}.txt")
    family = frozenset({"dcp-save-planning-rank0-bottleneck", "checkpoint-full-state-dict-gather-timeout",
                        "nccl-watchdog-timeout-slow-rank", "slow-shared-filesystem-checkpoint-stall"})
    return Scenario("checkpoint", files, Expect(0, "checkpoint", world - 1, family))


def all_ranks_oom_at_once(*, world: int = 8, seed: int = 5) -> Scenario:
    """The batch is too large for every GPU: all ranks raise CUDA OOM within the same second."""
    rng = random.Random(seed)
    per_rank: dict[int, list[tuple[float, str]]] = {}
    for r in range(world):
        pid = 33000 + r
        p = f"[rank{r}]:"
        lines = nccl_startup("node01", pid, r, r, world, 1.0)
        t = 30.0 + rng.random() * 0.4
        lines += [(t - 0.2, p + glog("W", t - 0.2, pid, "torch/csrc/autograd/graph.cpp:82", "Warning: grad and param do not obey the gradient layout contract."))]
        lines += timed(t, oom_lines(f"{p} ", r, pid))
        per_rank[r] = lines
    files = layout("train-bs64", per_rank, interleaved=True)
    return Scenario("all-at-once", files, Expect(None, "oom", 0, OOM_FAMILY, no_single=True, failing=world))


def dmesg_t(t: float, message: str) -> str:
    """`dmesg -T`: the kernel's ctime stamp in brackets; the host is only in the file's name."""
    hh, mm, ss, _ = clock(t)
    return f"[Wed Dec  {DAY[1]} {hh:02d}:{mm:02d}:{ss:02d} 2026] {message}"


def journald(t: float, host: str, message: str) -> str:
    """`journalctl -k`: zero-padded day, the host, then "kernel: "."""
    hh, mm, ss, _ = clock(t)
    return f"Dec {DAY[1]:02d} {hh:02d}:{mm:02d}:{ss:02d} {host} kernel: {message}"


def node_file_failure(kind: str, *, world: int = 16, culprit: int = 13, bus_ids: bool = True, seed: int = 6) -> Scenario:
    """A node-level failure whose only trace in the rank logs is an echo (a CUDA error) or nothing
    at all; the node's kernel log, a separate file, says what happened:

    - "xid": Xid 79 in `dmesg -T` output saved as node02-dmesg.txt (no host in the lines);
    - "ecc": an uncorrectable ECC Xid in `journalctl -k` output; the NCCL lines carry no bus ids
      when `bus_ids` is False, so only "the one rank of that node with a device error" ties them;
    - "oom-killer": the kernel OOM killer kills the culprit's process (it prints nothing), syslog.
    """
    rng = random.Random(seed)
    per_rank: dict[int, list[tuple[float, str]]] = {}
    t_fail = 140.0
    node = node_of(culprit)
    for r in range(world):
        pid, local = 52200 + r, r % 8
        p = f"[rank{r}]:"
        lines = nccl_startup(node_of(r), pid, local, r, world, 1.0 + r * 0.003)
        if not bus_ids:
            lines = [(t, x.split(" busId ")[0]) for t, x in lines]
        lines += chatter(r, p, 4.0, t_fail, rng, 3300)
        if r == culprit and kind != "oom-killer":
            lines += timed(t_fail + 0.6, traceback(f"{p} ", TRAIN_FRAMES[:3], [
                "RuntimeError: CUDA error: uncorrectable ECC error encountered" if kind == "ecc"
                else "RuntimeError: CUDA error: unspecified launch failure",
                "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
            ]))
        elif r != culprit:
            t = t_fail + 600.5 + r * 0.002
            lines += timed(t, watchdog_block(r, t, pid, 5120, "ALLREDUCE"))
        per_rank[r] = lines
    files = layout("job", per_rank, interleaved=False, file_name=lambda r: f"rank{r}.log")
    pci = f"0000:{BUS_IDS[culprit % 8][:-3]}:00"
    victim = 52200 + culprit
    if kind == "xid":
        kern = [dmesg_t(0.0, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024"),
                dmesg_t(t_fail, f"NVRM: Xid (PCI:{pci}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."),
                dmesg_t(t_fail, f"NVRM: GPU {pci}.0: GPU has fallen off the bus.")]
        name, expect = f"{node}-dmesg.txt", Expect(culprit, "xid", world - 1, frozenset({"gpu-fallen-off-bus-xid79"}))
    elif kind == "ecc":
        kern = [journald(t_fail, node, f"NVRM: Xid (PCI:{pci}): 48, pid={victim}, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0."),
                journald(t_fail, node, f"NVRM: Xid (PCI:{pci}): 63, pid={victim}, name=python3, Row Remapper: New row marked for remapping, reset gpu to activate.")]
        name, expect = "kern.log", Expect(culprit, "xid", world - 1, frozenset({"gpu-ecc-uncorrectable-xid48"}))
    else:
        kern = [syslog(t_fail, node, "python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0"),
                syslog(t_fail, node, f"Out of memory: Killed process {victim} (python3) total-vm:181403520kB, anon-rss:167012344kB, file-rss:70312kB, shmem-rss:16384kB, UID:1000 pgtables:331404kB oom_score_adj:0")]
        name, expect = f"{node}-syslog", Expect(culprit, "host-oom", world - 1, frozenset({"host-ram-oom-killed-sigkill"}))
    files.append(LogFile(name=name, text="\n".join(kern) + "\n"))
    return Scenario(f"node-file-{kind}", files, expect)


def all_scenarios() -> list[Scenario]:
    return [
        oom_then_timeouts(),
        oom_then_timeouts(interleaved=True),
        xid79_with_nccl_errors(),
        dataloader_worker_killed(),
        collective_desync(),
        rank0_saving_checkpoint(),
        all_ranks_oom_at_once(),
    ]


# -- benchmark input -----------------------------------------------------------------------------------


def write_big_rank_file(path: Path, rank: int, world: int, size_mb: int, *, culprit: int = 17, seed: int = 0) -> None:
    """A ~size_mb per-rank log: NCCL start-up, a long stretch of training output (with NCCL INFO
    noise), then the rank's end: the OOM for `culprit`, a watchdog timeout for everybody else."""
    rng = random.Random(seed + rank)
    pid, local, node = 40000 + rank, rank % 8, node_of(rank)
    p = f"[rank{rank}]:"
    head = [x for _, x in nccl_startup(node, pid, local, rank, world, 1.0)]
    if rank == culprit:
        tail = oom_lines(f"{p} ", local, pid)
    else:
        tail = watchdog_block(rank, 790.0, pid, 8812, "ALLREDUCE")
    block = []
    for i in range(2000):
        k = rng.random()
        if k < 0.55:
            block.append(f"{p}[{iso(5 + i * 0.1)}] [INFO] [logging.py:128:log_dist] [Rank {rank}] step={8000 + i} loss={rng.uniform(1.8, 2.6):.4f} tokens/s={rng.randint(3100, 3400)}")
        elif k < 0.85:
            block.append(f"{{'loss': {rng.uniform(1.8, 2.6):.4f}, 'grad_norm': {rng.uniform(0.2, 0.9):.4f}, 'learning_rate': 2.9e-05, 'epoch': 0.{i % 97:02d}}}")
        else:
            block.append(f"{node}:{pid}:{pid + 57} [{local}] NCCL INFO Channel {i % 32:02d}/0 : {rank}[{local}] -> {(rank + 1) % world}[{(local + 1) % 8}] via P2P/CUMEM/read")
    block_text = ("\n".join(block) + "\n").encode()
    target = size_mb << 20
    with open(path, "wb") as f:
        f.write(("\n".join(head) + "\n").encode())
        written = 0
        while written + len(block_text) < target:
            f.write(block_text)
            written += len(block_text)
        f.write(("\n".join(tail) + "\n").encode())
