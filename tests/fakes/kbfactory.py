"""Compose small knowledge bases for tests (entries written as YAML, exactly as authors do)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def entry_dict(entry_id: str, category: str = "communication", **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": entry_id,
        "title": f"Title of {entry_id}",
        "category": category,
        "tags": ["test"],
        "summary": f"Summary of {entry_id} for tests.",
        "symptoms": ["Something visible happens."],
        "fingerprints": [],
        "root_cause": ["Because of a reason."],
        "fix": ["Do the fix."],
        "confirm": ["Check it."],
        "references": [{"title": "Docs", "url": "https://example.org/docs"}],
        "samples": ["first sample line", "second sample line"],
        "questions": ["what happened?"],
    }
    data.update(overrides)
    return data


def write_kb(root: Path, entries: list[dict[str, Any]]) -> Path:
    for data in entries:
        folder = root / data["category"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{data['id']}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return root


# A small, confusable knowledge base: two entries share the ibv_modify_qp line; a hub owns the
# generic watchdog line; an OOM entry; an entry gated by requires/excludes.
FIXTURE_ENTRIES = [
    entry_dict(
        "roce-qp-timeout-during-checkpoint-save",
        title="RoCE QP timeout during distributed checkpoint save",
        summary="dcp.save at 64+ GPUs on RoCE opens new NCCL connections whose queue-pair setup times out.",
        symptoms=["Training works but the job hangs or dies at the first checkpoint save at 64 GPUs."],
        fingerprints=[
            {"pattern": r"Call to ibv_modify_qp failed with (?:error )?(?:110 )?Connection timed out", "strength": "strong"},
            {"pattern": r"torch[./]distributed[./]checkpoint|dcp\.save", "strength": "supporting"},
        ],
        samples=[
            "node07:48211:49012 [5] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out errno 110\n"
            '  File "/usr/lib/python3.10/site-packages/torch/distributed/checkpoint/state_dict_saver.py", line 150, in save\n'
            "RuntimeError: NCCL Error 2: unhandled system error",
            "h800-031:771902:772455 [2] misc/ibvwrap.cc:309 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_2:1\n"
            "    dcp.save(state_dict, checkpoint_id=path)",
        ],
        questions=["why does dcp.save hang at 64 GPUs?", "checkpoint save fails on RoCE but training works"],
        siblings=["nccl-rail-only-fabric-cross-nic-timeout"],
        excludes=[r"all_to_all|alltoall"],
    ),
    entry_dict(
        "nccl-rail-only-fabric-cross-nic-timeout",
        title="QP connect timeout on a rail-optimised fabric",
        summary="All-to-all traffic crosses rails that cannot reach each other; set NCCL_CROSS_NIC=0.",
        symptoms=["all_to_all fails while all_reduce passes on a rail-optimised cluster."],
        fingerprints=[
            {"pattern": r"Call to ibv_modify_qp failed with (?:error )?(?:110 )?Connection timed out", "strength": "supporting"},
            {"pattern": r"all_to_all|alltoall|ALLTOALL", "strength": "supporting"},
        ],
        samples=[
            "node01:1:2 [0] misc/ibvwrap.cc:309 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_3:1\n"
            "  File \"/opt/moe/dispatch.py\", line 41, in forward\n    dist.all_to_all_single(out, inp)",
            "gpu9:3:4 [1] NCCL WARN Call to ibv_modify_qp failed with error Connection timed out\nalltoall_perf: FAILED",
        ],
        questions=["all_to_all times out on our rail optimized fabric"],
        siblings=["roce-qp-timeout-during-checkpoint-save"],
    ),
    entry_dict(
        "nccl-watchdog-timeout",
        category="distributed-training",
        title="NCCL watchdog timeout",
        summary="A collective did not complete within the process group timeout; find the rank that stopped first.",
        symptoms=["Every rank prints a watchdog timeout after ten or thirty minutes."],
        fingerprints=[
            {"pattern": r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=\d+", "strength": "strong"},
        ],
        samples=[
            "[rank3]:[E1202 12:13:11.123456 4321 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=8812, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.",
            "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800068 milliseconds before timing out.",
        ],
        questions=["what does the NCCL watchdog timeout mean"],
    ),
    entry_dict(
        "cuda-oom-activations-batch-too-large",
        category="memory",
        title="CUDA out of memory: activations of a too-large batch",
        summary="The forward/backward activations of the batch do not fit in GPU memory.",
        symptoms=["torch.OutOfMemoryError at the first steps after raising batch size or sequence length."],
        fingerprints=[
            {"pattern": r"(?:torch\.(?:cuda\.)?OutOfMemoryError|RuntimeError): CUDA out of memory\. Tried to allocate", "strength": "strong"},
        ],
        excludes=[r"ncclCommInitRank|ncclUnhandledCudaError"],
        samples=[
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB",
            "RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 3; 39.59 GiB total capacity)",
        ],
        questions=["GPU runs out of memory when I increase the batch size"],
    ),
    entry_dict(
        "nccl-cuda-oom-communicator-init",
        category="memory",
        title="CUDA OOM while NCCL creates its communicator",
        summary="NCCL cannot allocate its buffers because the GPU is already full when the communicator is created.",
        fingerprints=[
            {"pattern": r"CUDA out of memory\. Tried to allocate", "strength": "supporting"},
        ],
        requires=[r"ncclCommInitRank|ncclUnhandledCudaError"],
        samples=[
            "ncclUnhandledCudaError: Call to CUDA function failed.\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
            "ncclCommInitRank failed\nRuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB",
        ],
        questions=["nccl init fails with out of memory"],
    ),
]


# A harmless warning, its entry, an OOM line and a plain user bug: the verdict and calibration tests share them.
TYPED_STORAGE = (
    "/usr/lib/python3.10/site-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be removed "
    "in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using "
    "storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()"
)

BENIGN = entry_dict(
    "torch-typedstorage-deprecated",
    category="environment",
    kind="benign",
    title="TypedStorage is deprecated (harmless warning)",
    summary="A deprecation notice torch prints when code touches tensor.storage(); training is unaffected.",
    symptoms=["A UserWarning about TypedStorage at start-up or when loading a checkpoint."],
    fingerprints=[{"pattern": r"TypedStorage is deprecated", "strength": "strong", "source": "PyTorch >=2.0 torch/storage.py"}],
    root_cause=["Some library still calls tensor.storage(), which torch plans to remove; nothing is wrong with the run."],
    fix=["Upgrade the library that calls tensor.storage(), or filter the warning with warnings.filterwarnings."],
    when_it_matters=["When you upgrade to a torch release that has removed TypedStorage and the calling code breaks."],
    samples=[TYPED_STORAGE, "  warnings.warn(message, UserWarning)\n" + TYPED_STORAGE.replace("831", "776")],
    questions=["is the TypedStorage is deprecated warning a problem?"],
)

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB"
USER_BUG = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/proj/train.py", line 88, in main\n'
    '    y = batch["label"]\n'
    "KeyError: 'label'\n"
)
