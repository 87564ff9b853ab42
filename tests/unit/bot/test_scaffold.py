"""`traindoc kb new --from LOG` drafts an entry that lint rejects until its TODOs are filled."""

from __future__ import annotations

import re

import yaml

from bot.model import Diagnosis
from bot.scaffold import draft_entry, fingerprint_candidates, to_yaml
from kb.lint import static_problems
from kb.load import load_kb
from kb.patterns import compile_linear

LOG = """\
2026-12-01T08:14:02.118Z INFO starting trainer on node gpu-a17 (job 99812)
[rank0]: Traceback (most recent call last):
[rank0]:   File "/opt/acme/launch/runner.py", line 212, in main
[rank0]:     lease = acquire_gpu_lease(pool="a100-east", timeout=30)
[rank0]:   File "/opt/acme/launch/leases.py", line 88, in acquire_gpu_lease
[rank0]:     raise LeaseError(f"lease server refused lease {lease_id} for pool {pool}")
[rank0]: acme.launch.LeaseError: lease server refused lease 0x7f3a11c2 for pool a100-east after 30 s
"""


def _report(text: str):
    from bot.ingest import report_from_text

    return report_from_text(text)


def test_candidates_generalise_numbers_and_addresses_and_match_the_log():
    candidates = fingerprint_candidates(LOG)
    assert candidates, "the LeaseError line is distinctive"
    top = candidates[0]
    assert "LeaseError" in top.text and top.line == 7
    assert "0x7f3a11c2" not in top.pattern and r"\d+" in top.pattern
    compiled = compile_linear(top.pattern)
    assert compiled.search(LOG.replace("0x7f3a11c2", "0xdeadbeef").replace("30 s", "45 s"))
    assert not any(re.search(r"Traceback|File \\", c.pattern) for c in candidates)


def test_draft_is_valid_yaml_and_lint_rejects_it_until_todos_are_filled(tmp_path):
    report = _report(LOG)
    draft = draft_entry(report, Diagnosis(verdict="abstain", confidence=0.0, results=(), kind="log"), entry_id="acme-lease-refused", category="launch-and-elastic")
    path = tmp_path / "launch-and-elastic" / "acme-lease-refused.yaml"
    path.parent.mkdir()
    path.write_text(to_yaml(draft))
    problems = static_problems(load_kb(tmp_path))
    assert any("still says TODO" in p for p in problems)
    filled = yaml.safe_load(path.read_text())
    for key in ("title", "summary"):
        filled[key] = f"Acme lease server refused the GPU lease ({key})"
    filled["tags"] = ["acme", "lease"]
    filled["symptoms"] = ["The job dies before the first step."]
    filled["root_cause"] = ["The lease pool is exhausted."]
    filled["fix"] = ["Ask for a lease in another pool."]
    filled["confirm"] = ["acme-lease status shows the pool full."]
    filled["references"] = [{"title": "Acme runbook", "url": "https://wiki.example.org/lease"}]
    filled["samples"][1] = LOG.replace("a100-east", "h100-west")
    filled["questions"] = ["why was my GPU lease refused?"]
    for fingerprint in filled["fingerprints"]:
        fingerprint["source"] = "acme launcher >=3 leases.py"
    path.write_text(yaml.safe_dump(filled))
    assert static_problems(load_kb(tmp_path)) == []
