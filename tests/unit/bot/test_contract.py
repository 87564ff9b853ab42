"""The JSON output is the documented contract: the committed schema is the generated one, and
every verdict's output validates against it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.contract import DiagnosisOut, schema

SCHEMA_FILE = Path(__file__).resolve().parents[3] / "docs" / "json.schema.json"

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB\n"
USER_BUG = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/proj/train.py", line 88, in <module>\n'
    "    main()\n"
    '  File "/home/ana/proj/data.py", line 31, in __getitem__\n'
    '    return {"labels": row["label"]}\n'
    "KeyError: 'label'\n"
)
WARNING_ONLY = "/opt/venv/lib/python3.11/site-packages/torch/cuda/memory.py:330: FutureWarning: torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats\n  warnings.warn(\n"
RANKS = "".join(f"[rank{r}]: step 10 loss 2.1\n" for r in range(4)) + "[rank2]: " + OOM


def test_committed_schema_is_generated_from_the_model():
    assert json.loads(SCHEMA_FILE.read_text()) == schema(), "run: python -m bot.contract > docs/json.schema.json"


@pytest.mark.model  # a question runs dense retrieval: the first call builds the fixture index
@pytest.mark.parametrize(
    ("stdin", "verdict"),
    [(OOM + "Traceback (most recent call last):\n", "match"), ("how do I center a div in css?\n", None), (USER_BUG, "user-code"), (RANKS, None), (WARNING_ONLY, "abstain")],
)
def test_every_output_validates(fixture_kb_dir, tmp_path, monkeypatch, stdin, verdict):
    monkeypatch.setenv("TRAINDOC_KB_DIR", str(fixture_kb_dir))
    monkeypatch.setenv("TRAINDOC_INDEX_DIR", str(tmp_path / "index"))
    result = CliRunner().invoke(app, ["diagnose", "-", "--json"], input=stdin)
    assert result.exit_code == 0, result.output
    out = DiagnosisOut.model_validate_json(result.stdout)
    if verdict:
        assert out.verdict == verdict
    assert (out.abstain_reason is not None) == (out.verdict == "abstain")
    if stdin is WARNING_ONLY:
        assert out.abstain_reason == "the log shows warnings but no error, and no entry knows them as a failure"
    if stdin is RANKS:
        assert out.triage is not None and out.triage.initiating is not None and out.triage.initiating.rank == 2
