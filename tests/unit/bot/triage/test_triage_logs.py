"""Logs as people paste them: every launcher's prefix style, kernel lines from a node's own file,
and evidence located in the user's files."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.model import LogFile, Report
from bot.triage import triage
from tests.fakes.prefix_styles import STYLES, styled_job
from tests.fakes.scenarios import node_file_failure


def line_of(files, name: str, line: int) -> str:
    text = next(f.text for f in files if f.name == name)
    return text.split("\n")[line - 1]


@pytest.mark.parametrize("style", STYLES)
def test_the_culprit_is_found_in_every_prefix_style(style):
    files = styled_job(style, world=8, per_node=4, culprit=5)
    result = triage(files)
    init = result.initiating
    assert (init.rank, init.kind) == (5, "oom")
    assert result.collateral_ranks == (0, 1, 2, 3, 4, 6, 7)
    assert result.summary.startswith("rank 5 on ")
    assert "ran out of GPU memory first" in result.summary
    # the location is the user's: the file it is in and the line number in that file
    assert "CUDA out of memory" in line_of(files, init.file, init.line)
    assert "Watchdog caught" not in result.focus_text


@pytest.mark.parametrize(
    ("kind", "bus_ids", "want_kind", "words"),
    [
        ("xid", True, "xid", "rank 13 on node02 failed first: Xid 79 (GPU fell off the bus)"),
        ("xid", False, "xid", "rank 13 on node02 failed first: Xid 79 (GPU fell off the bus)"),  # the only rank with a device error
        ("ecc", False, "xid", "rank 13 on node02 failed first: Xid 48 (double-bit ECC error)"),  # by the pid the driver names
        ("oom-killer", True, "host-oom", "rank 13 on node02 was killed by the host OOM killer first"),  # by pid; rank 13 printed nothing
    ],
)
def test_kernel_lines_from_a_node_file_join_their_rank(kind, bus_ids, want_kind, words):
    scenario = node_file_failure(kind, bus_ids=bus_ids)
    result = triage(scenario.files)
    init = result.initiating
    assert (init.rank, init.node, init.kind) == (13, "node02", want_kind)
    assert init.file == scenario.files[-1].name  # the kernel's own file, not rank13.log
    assert init.text in line_of(scenario.files, init.file, init.line)
    assert result.summary.startswith(words)
    assert len(result.collateral_ranks) == 15 and 13 not in result.collateral_ranks


def test_a_kernel_line_from_a_node_without_ranks_stays_a_node_event():
    scenario = node_file_failure("xid", bus_ids=False)
    files = [f for f in scenario.files if f.name != "rank13.log"]  # the rank that could claim it is missing
    files[-1] = LogFile(name="node07-dmesg.txt", text=files[-1].text)
    result = triage(files)
    assert result.initiating.rank is None and result.initiating.node == "node07"
    assert result.summary.startswith("a GPU on node07 failed first: Xid 79")


def test_evidence_lines_are_per_file_and_clipped_around_the_match(fixture_engine):
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB")
    rank0 = "\n".join(f"step {i} loss 2.3" for i in range(40)) + "\n"
    rank1 = "\n".join(f"step {i} loss 2.3" for i in range(15)) + "\n" + "x" * 5000 + " " + oom + "\nTraceback (most recent call last):\n"
    report = Report(files=(LogFile(name="rank0.log", text=rank0), LogFile(name="rank1.log", text=rank1)), kind="log")
    diagnosis = fixture_engine.diagnose(report)
    hit = next(h for c in diagnosis.results for h in c.why.fingerprints if "out of memory" in h.pattern)
    assert (hit.file, hit.line) == ("rank1.log", 16)
    assert "CUDA out of memory" in hit.text and len(hit.text) <= 300
    assert "CUDA out of memory" in hit.excerpt(60)
    first = diagnosis.to_json()["results"][0]["why"]["fingerprints"][0]
    assert (first["file"], first["line"]) == ("rank1.log", 16)


def test_a_binary_file_among_rank_files_is_named(fixture_kb_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINDOC_KB_DIR", str(fixture_kb_dir))
    monkeypatch.setenv("TRAINDOC_INDEX_DIR", str(tmp_path / "index"))
    paths = []
    for f in styled_job("rank", world=4, per_node=4, culprit=1):
        (tmp_path / f.name).write_text(f.text)
        paths.append(str(tmp_path / f.name))
    (tmp_path / "core.12345").write_bytes(bytes(range(256)) * 64)
    result = CliRunner().invoke(app, ["diagnose", *paths, str(tmp_path / "core.12345"), "--json"])
    assert result.exit_code == 2
    assert "core.12345" in result.output and "binary" in result.output
    assert not result.stdout.strip().startswith("{")


def test_diagnose_json_locates_the_initiator_in_its_file(fixture_kb_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINDOC_KB_DIR", str(fixture_kb_dir))
    monkeypatch.setenv("TRAINDOC_INDEX_DIR", str(tmp_path / "index"))
    paths = []
    for f in styled_job("kubectl-timestamps", world=8, per_node=4, culprit=5):
        (tmp_path / f.name).write_text(f.text)
        paths.append(str(tmp_path / f.name))
    result = CliRunner().invoke(app, ["diagnose", *paths, "--json"])
    assert result.exit_code == 0, result.output
    init = json.loads(result.stdout)["triage"]["initiating"]
    assert init["rank"] == 5 and init["file"].endswith("trainer-worker-1.log")
    assert "CUDA out of memory" in (tmp_path / "trainer-worker-1.log").read_text().split("\n")[init["line"] - 1]
