from bot.ingest import report_from_text
from bot.versions import mismatches, versions_of
from kb.load import load_kb
from tests.fakes.kbfactory import entry_dict, write_kb


def test_versions_of_a_log():
    text = "PyTorch version: 2.4.1+cu121\nCUDA used to build PyTorch: 12.1\nNCCL version 2.20.5+cuda12.4\nDriver Version: 550.54.15"
    assert versions_of(text) == {"torch": "2.4.1+cu121", "cuda": "12.4", "nccl": "2.20.5", "driver": "550.54.15"}


def test_mismatches():
    assert mismatches({"torch": ">=2.6"}, {"torch": "2.4.1+cu121"}) == ["torch 2.4.1+cu121 is not >=2.6"]
    assert mismatches({"torch": ">=2.6"}, {"torch": "2.6.0.dev20241112+cu124"}) == []
    assert mismatches({"torch": ">=2.6"}, {}) == []
    assert mismatches({"nccl": "<2.19"}, {"nccl": "not-a-version"}) == []


def test_an_entry_ruled_out_by_the_logged_version_steps_back(tmp_path, embedder):
    from bot.diagnose import Engine

    line = "_pickle.UnpicklingError: Weights only load failed."
    new = entry_dict("new-default", applies_to={"torch": ">=2.6"}, fingerprints=[{"pattern": "Weights only load failed"}],
                     samples=[line + " a", line + " b"])
    old = entry_dict("old-cause", fingerprints=[{"pattern": "Weights only load failed"}], samples=[line + " c", line + " d"])
    engine = Engine(load_kb(write_kb(tmp_path / "kb", [new, old])), embedder=embedder, index_dir=tmp_path / "idx")
    on_old_torch = engine.diagnose(report_from_text("PyTorch version: 2.4.0\nTraceback (most recent call last):\n" + line))
    on_new_torch = engine.diagnose(report_from_text("PyTorch version: 2.6.0\nTraceback (most recent call last):\n" + line))
    assert on_old_torch.results[0].id == "old-cause"
    by_id = {c.id: c.score for c in on_new_torch.results}
    assert by_id["new-default"] > by_id["old-cause"] * 0.9  # not demoted when the version fits
