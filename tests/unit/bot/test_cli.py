import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from bot.cli import app

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB\n"


@pytest.fixture
def cli(fixture_kb_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINDOC_KB_DIR", str(fixture_kb_dir))
    monkeypatch.setenv("TRAINDOC_INDEX_DIR", str(tmp_path / "index"))
    runner = CliRunner()

    def run(*args, stdin=None):
        return runner.invoke(app, list(args), input=stdin)

    return run


def test_diagnose_json_from_a_file(cli, tmp_path):
    log = tmp_path / "train.log"
    log.write_text("step 1 loss 2.3\n" + OOM + "Traceback (most recent call last):\n")
    result = cli("diagnose", str(log), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["verdict"] == "match"
    assert data["results"][0]["id"] == "cuda-oom-activations-batch-too-large"
    assert data["results"][0]["why"]["fingerprints"][0]["line"] == 2


def test_diagnose_reads_stdin_and_renders_for_a_terminal(cli):
    result = cli("diagnose", "-", stdin=OOM + "Traceback (most recent call last):\n")
    assert result.exit_code == 0, result.output
    assert "CUDA out of memory: activations" in result.stdout
    assert "Fix:" in result.stdout and "line 1" in result.stdout


def test_empty_input_exits_2_with_one_line(cli):
    result = cli("diagnose", "-", stdin="  \n  ")
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "empty input" in result.stderr


def test_binary_input_exits_2(cli, tmp_path):
    blob = tmp_path / "model.bin"
    blob.write_bytes(bytes(range(256)) * 64)
    result = cli("diagnose", str(blob))
    assert result.exit_code == 2 and "binary" in result.stderr


def test_missing_file_exits_2(cli, tmp_path):
    result = cli("diagnose", str(tmp_path / "nope.log"))
    assert result.exit_code == 2 and "no such file" in result.stderr


@pytest.mark.slow  # writes a 50 MB log
def test_fifty_megabyte_log_is_answered(cli, tmp_path):
    noise = "".join(f"[rank0]: step {i} loss 2.{i % 10} lr 3e-4 tokens/s 41234\n" for i in range(1000))
    big = tmp_path / "big.log"
    with big.open("w") as f:
        while f.tell() < 50 << 20:
            f.write(noise)
        f.write("[rank0]: " + OOM)
    result = cli("diagnose", str(big), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["results"][0]["id"] == "cuda-oom-activations-batch-too-large"
    assert data["results"][0]["why"]["fingerprints"][0]["line"] > 1_000_000


def test_one_ten_megabyte_line(cli, tmp_path):
    log = tmp_path / "line.log"
    log.write_text("x" * (10 << 20) + "\n" + OOM)
    result = cli("diagnose", str(log), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["results"][0]["id"] == "cuda-oom-activations-batch-too-large"


def test_ansi_crlf_slack_escaped_log(cli):
    raw = "\x1b[31mtorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB\x1b[0m\r\nsize &lt; 2\r\n"
    result = cli("diagnose", "-", "--json", stdin=raw)
    assert result.exit_code == 0
    assert json.loads(result.stdout)["results"][0]["id"] == "cuda-oom-activations-batch-too-large"


def test_ask_json(cli):
    result = cli("ask", "why does dcp.save hang at 64 GPUs?", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["results"][0]["id"] == "roce-qp-timeout-during-checkpoint-save"


def test_ask_empty_exits_2(cli):
    assert cli("ask", "   ").exit_code == 2


def test_kb_show_unknown_id_suggests_closest(cli):
    result = cli("kb", "show", "nccl-watchdog-timout")
    assert result.exit_code == 2
    assert "nccl-watchdog-timeout" in result.stderr


def test_kb_show_list_stats(cli):
    shown = cli("kb", "show", "nccl-watchdog-timeout")
    assert shown.exit_code == 0 and "Watchdog caught" in shown.stdout
    listed = cli("kb", "list", "--category", "memory")
    assert listed.exit_code == 0 and listed.stdout.count("\n") == 2
    assert cli("kb", "list", "--category", "astrology").exit_code == 2
    stats = cli("kb", "stats")
    assert "total" in stats.stdout and " 5 entries" in stats.stdout


def test_kb_lint_passes_on_a_clean_kb_and_fails_on_a_broken_one(cli, tmp_path, monkeypatch):
    assert cli("kb", "lint").exit_code == 0
    broken = tmp_path / "broken" / "memory"
    broken.mkdir(parents=True)
    (broken / "bad-entry.yaml").write_text("id: bad-entry\ncategory: memory\n")
    monkeypatch.setenv("TRAINDOC_KB_DIR", str(tmp_path / "broken"))
    result = cli("kb", "lint")
    assert result.exit_code == 1 and "bad-entry.yaml" in result.stdout


def test_eval_prints_all_four_rows_and_writes_json(cli, tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "a.yaml").write_text(json.dumps({"text": OOM + "Traceback", "kind": "log", "label": "cuda-oom-activations-batch-too-large"}))
    (cases / "b.yaml").write_text(json.dumps({"text": "why does dcp.save hang at 64 GPUs?", "kind": "question", "label": "roce-qp-timeout-during-checkpoint-save"}))
    bug = 'Traceback (most recent call last):\n  File "/srv/app/score.py", line 9, in main\n    print(totals["validation"])\nKeyError: \'validation\'\n'
    (cases / "n.yaml").write_text(json.dumps({"text": bug, "kind": "log", "label": "none", "source": "composed", "negative": "user-code"}))
    out = tmp_path / "eval.json"
    result = cli("eval", str(cases), "--json", str(out))
    assert result.exit_code == 0, result.output
    for row in ("hybrid", "fingerprint", "lexical", "dense"):
        assert row in result.stdout
    assert "false_answer_rate" in result.stdout and "coverage" in result.stdout
    data = json.loads(out.read_text())
    assert data["cases"] == 3 and data["hybrid"]["top1"] == 1.0
    assert data["hybrid"]["negatives"] == 1 and data["hybrid"]["false_answer_rate"] == 0.0
    assert data["negatives"] == {"user-code": {"cases": 1, "user-code": 1}}
    assert {"top1", "top3", "mrr", "answered", "precision_answered", "p50_ms", "p95_ms"} <= set(data["dense"])
    assert [row["threshold"] for row in data["thresholds"]] == [0.3, 0.5, 0.7, 0.8, 0.9, 0.95]


def test_decisive_diagnosis_does_not_import_torch(fixture_kb_dir, tmp_path):
    code = (
        "import sys, json\n"
        "from typer.testing import CliRunner\n"
        "from bot.cli import app\n"
        f"r = CliRunner().invoke(app, ['diagnose', '-', '--json'], input={OOM!r})\n"
        "assert r.exit_code == 0, r.output\n"
        "print(json.dumps({'torch': 'torch' in sys.modules, 'st': 'sentence_transformers' in sys.modules}))\n"
    )
    env = {"TRAINDOC_KB_DIR": str(fixture_kb_dir), "TRAINDOC_INDEX_DIR": str(tmp_path / "i"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"torch": False, "st": False}


def test_kb_new_drafts_a_team_entry_that_lint_refuses_until_filled(cli, tmp_path, monkeypatch):
    log = tmp_path / "lease.log"
    log.write_text(
        "2026-12-01T08:14:02Z INFO trainer starting\n"
        "acme.launch.LeaseError: lease server refused lease 0x7f3a11c2 for pool h100 after 30 s\n"
    )
    team = tmp_path / "team"
    result = cli("kb", "new", "--from", str(log), "--out", str(team), "--id", "acme-lease-refused", "--category", "launch-and-elastic")
    assert result.exit_code == 0, result.output
    drafted = team / "launch-and-elastic" / "acme-lease-refused.yaml"
    assert "LeaseError: lease server refused lease 0x" in drafted.read_text()
    monkeypatch.setenv("TRAINDOC_KB_EXTRA", str(team))
    linted = cli("kb", "lint", "--static")
    assert linted.exit_code == 1 and "acme-lease-refused: summary still says TODO" in linted.output
    again = cli("kb", "new", "--from", str(log), "--out", str(team), "--id", "acme-lease-refused", "--category", "launch-and-elastic")
    assert again.exit_code == 2 and "exists" in again.stderr


def test_version_and_short_help():
    runner = CliRunner()
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and version.stdout.startswith("traindoc ")
    short = runner.invoke(app, ["-h"])
    assert short.exit_code == 0 and "diagnose" in short.stdout and "--version" in short.stdout
