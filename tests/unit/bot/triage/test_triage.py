"""Rank-aware triage on generated multi-rank scenarios: who failed first, what, and who followed."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from bot.model import Diagnosis, LogFile
from bot.render.rank_table import rank_ranges, rank_table
from bot.triage import triage
from bot.triage.fields import who
from index.prefixes import parse_timestamp
from index.sources import parse_source_name
from tests.fakes.scenarios import (
    Scenario,
    all_ranks_oom_at_once,
    all_scenarios,
    collective_desync,
    oom_then_timeouts,
    rank0_saving_checkpoint,
    xid79_with_nccl_errors,
)

SCENARIOS = all_scenarios()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario_verdict(scenario: Scenario):
    result = triage(scenario.files)
    expect = scenario.expect
    assert result is not None
    assert result.no_single_initiator is expect.no_single
    assert len(result.collateral_ranks) == expect.collateral
    if expect.no_single:
        assert result.initiating is None
        assert {g.kind for g in result.failing_groups} == {expect.kind}
        assert sum(len(g.ranks) for g in result.failing_groups) == expect.failing
        assert result.summary.startswith("No single initiator")
    else:
        assert result.initiating is not None
        assert result.initiating.rank == expect.rank
        assert result.initiating.kind == expect.kind
        assert expect.rank not in result.collateral_ranks
        assert f"rank {expect.rank}" in result.summary


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_initiating_line_is_a_line_of_its_own_file(scenario: Scenario):
    result = triage(scenario.files)
    if result.initiating is not None:
        text = next(f.text for f in scenario.files if f.name == result.initiating.file)
        line = text.split("\n")[result.initiating.line - 1]
        assert all(piece in line for piece in result.initiating.text.split("…"))  # clipped, never altered


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_small_chunks_give_the_same_verdict(scenario: Scenario):
    in_memory = triage(scenario.files)
    streamed = triage(scenario.files, chunk_bytes=4096)  # many chunk boundaries
    assert streamed.initiating == in_memory.initiating
    assert streamed.collateral_groups == in_memory.collateral_groups
    assert streamed.ranks_seen == in_memory.ranks_seen
    assert streamed.focus_text == in_memory.focus_text


def test_oom_summary_focus_and_versions():
    result = triage(oom_then_timeouts().files)
    assert result.summary.startswith("rank 11 on node02 ran out of GPU memory first")
    assert "15 ranks timed out waiting on ALLREDUCE SeqNum 8812" in result.summary
    assert result.collateral_groups[0].detail == "ALLREDUCE SeqNum 8812"
    assert "torch.OutOfMemoryError: CUDA out of memory" in result.focus_text
    assert result.focus_text.startswith("Traceback (most recent call last):")
    assert "Watchdog caught" not in result.focus_text  # retrieval sees the initiator, not the collateral
    assert "[rank11]" not in result.focus_text
    assert result.ranks_seen == 16 and result.world_size == 16
    assert result.versions["nccl"] == "2.20.5"


def test_missing_rank_file_is_silent():
    scenario = oom_then_timeouts()
    files = [f for f in scenario.files if f.name != "rank4.log"]
    result = triage(files)
    assert result.silent_ranks == (4,)
    assert result.initiating.rank == 11
    assert len(result.collateral_ranks) == 14


def test_xid_is_attributed_by_pci_bus_and_names_the_node():
    result = triage(xid79_with_nccl_errors().files)
    init = result.initiating
    assert (init.rank, init.node, init.kind) == (10, "node02", "xid")
    assert "Xid (PCI:0000:3a:00): 79" in init.text
    assert "rank 10 on node02 failed first: Xid 79 (GPU fell off the bus)" in result.summary
    assert init.file == "node02-kern.log"
    assert result.versions["driver"] == "550.54.15"
    assert "GPU has fallen off the bus" in result.focus_text


def test_desync_names_both_collectives():
    result = triage(collective_desync().files)
    assert "ALLGATHER SeqNum 4410" in result.summary
    assert "ALLREDUCE SeqNum 4410" in result.summary
    assert "OpType=ALLGATHER" in result.focus_text.split("\n")[0]
    assert not result.focus_text.startswith("3: ")  # srun --label stripped


def test_checkpoint_rank_is_the_one_that_never_timed_out():
    result = triage(rank0_saving_checkpoint().files)
    assert "rank 0 was still saving a checkpoint" in result.summary
    assert "Saving checkpoint" in result.focus_text
    assert "Watchdog caught collective operation timeout" in result.focus_text


def test_all_at_once_keeps_the_most_informative_block():
    result = triage(all_ranks_oom_at_once().files)
    assert "CUDA out of memory" in result.focus_text
    assert result.failing_groups[0].ranks == tuple(range(8))


def test_no_rank_structure_gives_none():
    text = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nValueError: bad value\n"
    assert triage([LogFile(text=text)]) is None


def test_ray_prefixes_attribute_ranks():
    lines = [
        "(RayWorkerWrapper pid=51234, ip=10.0.0.12) [rank2]: Traceback (most recent call last):",
        '(RayWorkerWrapper pid=51234, ip=10.0.0.12) [rank2]:   File "/app/worker.py", line 88, in execute_model',
        "(RayWorkerWrapper pid=51234, ip=10.0.0.12) [rank2]: RuntimeError: CUDA error: device-side assert triggered",
        ("(RayWorkerWrapper pid=51230, ip=10.0.0.11) [rank0]: torch.distributed.DistBackendError: NCCL error in: "
        "../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.21.5"),
        ("(RayWorkerWrapper pid=51231, ip=10.0.0.11) [rank1]: torch.distributed.DistBackendError: NCCL error in: "
        "../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.21.5"),
    ]
    result = triage([LogFile(name="vllm-serve.log", text="\n".join(lines))])
    assert (result.initiating.rank, result.initiating.node, result.initiating.kind) == (2, "10.0.0.12", "device-assert")
    assert result.collateral_ranks == (0, 1)
    assert result.versions["nccl"] == "2.21.5"


def test_json_contract_carries_the_triage():
    result = triage(oom_then_timeouts().files)
    out = Diagnosis(verdict="abstain", confidence=0.0, results=(), triage=result).to_json()["triage"]
    assert out["initiating"]["rank"] == 11 and out["initiating"]["node"] == "node02"
    assert out["initiating"]["line"] == result.initiating.line
    assert len(out["collateral_ranks"]) == 15 and out["ranks_seen"] == 16


def test_rank_table_lists_initiator_first_then_groups():
    console = Console(record=True, width=160)
    console.print(rank_table(triage(oom_then_timeouts().files)))
    rows = [line for line in console.export_text().splitlines() if line.strip()]
    assert rows[1].startswith("rank 11 on node02") and "CUDA out of memory" in rows[1]
    assert rows[2].startswith("15 ranks") and "watchdog timeout on ALLREDUCE SeqNum 8812" in rows[2]
    assert rank_ranges((0, 1, 2, 5, 7, 8)) == "0-2,5,7-8"


@pytest.mark.parametrize(
    ("line", "rank", "local", "node", "message"),
    [
        ("[rank3]:[E1202 12:13:11.123456 4321 ProcessGroupNCCL.cpp:616] [Rank 3] x", 3, None, None, "[Rank 3] x"),
        ("[default5]:RuntimeError: boom", None, 5, None, "RuntimeError"),
        ("12: [E1202 12:13:11.123456 4321 ProcessGroupNCCL.cpp:475] x", 12, None, None, "x"),
        ("node02:41234:41301 [1] NCCL INFO comm 0x55 rank 9 nranks 16", None, None, "node02", "NCCL INFO comm"),
        ("Dec  2 12:03:11 node02 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234", None, None, "node02", "NVRM"),
        ("[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 48, pid=1234", None, None, None, "NVRM"),
        ("2025-07-02 07:41:59,123 - INFO - rank=7 - step 10", 7, None, None, "- INFO - rank=7"),
        ("[1,6]<stdout>:hello", 6, None, None, "hello"),
        ("(RayWorkerWrapper pid=77, ip=10.1.2.3) INFO 12-02 12:03:11 worker.py:1] x", None, None, "10.1.2.3", "x"),
        ("node03: [rank20]: ValueError: x", 20, None, "node03", "ValueError"),
    ],
)
def test_who_printed_a_line(line, rank, local, node, message):
    p = who(line)
    assert (p.rank, p.local_rank, p.node) == (rank, local, node)
    assert p.message.startswith(message)


def test_pg_rank_only_from_the_default_group():
    assert who("[PG ID 0 PG GUID 0(default_pg) Rank 3]  failure detected").pg_rank == 3
    assert who("[PG ID 5 PG GUID 37(TENSOR_MODEL_PARALLEL_GROUP) Rank 1] x").pg_rank is None


@pytest.mark.parametrize(
    ("text", "clock"),
    [
        ("[E1202 12:13:11.123456 4321 x.cpp:1] y", "12:13:11"),
        ("[2025-07-02 07:41:59,123] [INFO] x", "07:41:59"),
        ("2025-07-02T07:41:59.5Z host", "07:41:59"),
        ("Dec  2 12:03:11 node02 kernel: NVRM", "12:03:11"),
        ("ERROR 12-02 12:03:11 worker.py:1] x", "12:03:11"),
    ],
)
def test_parse_timestamp(text, clock):
    assert parse_timestamp(text).clock == clock


def test_timestamps_order_across_formats():
    glog = parse_timestamp("[E1202 12:13:11.500000 1 x.cpp:1] y").key
    iso = parse_timestamp("2025-12-02 12:13:11,000 - x").key
    assert iso < glog


def test_parse_source_name():
    def facts(name):
        origin = parse_source_name(name)
        return origin.node, origin.rank, origin.kernel

    assert facts("logs/node02/rank17.log") == ("node02", 17, False)
    assert facts("train-rank_3.out") == (None, 3, False)
    assert facts("slurm-88123.out") == (None, None, False)
    assert facts("worker-2.log") == ("worker-2", None, False)
    assert facts("logs/trainer-worker-2.log") == ("trainer-worker-2", None, False)
    assert facts("node03-dmesg.txt") == ("node03", None, True)


def test_torchrun_log_dir_files_carry_the_local_rank():
    scenario = oom_then_timeouts(world=8, culprit=5)
    # what the ranks print themselves, without the "[rankN]:" prefixes, one directory per local rank
    files = [LogFile(name=f"logs/run7/attempt_0/{f.name[4:-4]}/stderr.log", text=re.sub(r"(?m)^\[rank\d+\]: ?", "", f.text))
             for f in scenario.files if f.name.startswith("rank")]
    assert "[rank" not in files[5].text
    result = triage(files)
    assert result.initiating.rank == 5
    assert result.ranks_seen == 8 and len(result.collateral_ranks) == 7


def test_every_failure_kind_a_rule_assigns_is_worded_in_the_one_table():
    from bot.kinds import KINDS
    from bot.triage.rules import RULES

    assert {r.kind for r in RULES if r.role != "info"} <= set(KINDS)
