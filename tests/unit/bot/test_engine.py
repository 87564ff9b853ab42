import json

import numpy as np
import pytest

from bot.ingest import report_from_text
from index import store
from index.fingerprints import FingerprintIndex
from kb.load import load_kb
from tests.fakes.kbfactory import FIXTURE_ENTRIES, entry_dict, write_kb


def ids(diagnosis):
    return [c.id for c in diagnosis.results]


def test_seed_question_returns_the_seed_entry(fixture_engine):
    d = fixture_engine.diagnose(report_from_text("why does dcp.save hang at 64 GPUs?"))
    assert d.kind == "question"
    assert ids(d)[0] == "roce-qp-timeout-during-checkpoint-save"


def test_seed_log_line_is_decided_by_its_fingerprint(fixture_engine):
    log = (
        "step 400 loss 1.93\n"
        "gpu-7:1:2 [3] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out errno 110\n"
        "  File \"/x/site-packages/torch/distributed/checkpoint/state_dict_saver.py\", line 9, in save\n"
    )
    d = fixture_engine.diagnose(report_from_text(log))
    best = d.results[0]
    assert best.id == "roce-qp-timeout-during-checkpoint-save"
    assert d.verdict == "match"
    assert [(h.line, h.strength) for h in best.why.fingerprints] == [(2, "strong"), (3, "supporting")]
    # the sibling sharing the line is the runner-up, far behind
    assert d.results[1].id == "nccl-rail-only-fabric-cross-nic-timeout"
    assert best.score - d.results[1].score > 0.3


def test_specific_evidence_beats_the_shared_line(fixture_engine):
    log = "n1:1:2 [0] NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_1:1\nall_to_all_single failed"
    d = fixture_engine.diagnose(report_from_text(log))
    assert ids(d)[0] == "nccl-rail-only-fabric-cross-nic-timeout"
    seed = next(c for c in d.results if c.id == "roce-qp-timeout-during-checkpoint-save")
    assert seed.why.fingerprints == ()  # excluded: its fingerprint evidence does not count


def test_requires_and_excludes_gate_fingerprints(fixture_engine):
    plain = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB"
    nccl = "ncclCommInitRank failed: ncclUnhandledCudaError\n" + plain
    d = fixture_engine.diagnose(report_from_text(plain + "\nTraceback (most recent call last):"))
    assert ids(d)[0] == "cuda-oom-activations-batch-too-large"
    d = fixture_engine.diagnose(report_from_text(nccl))
    assert ids(d)[0] == "nccl-cuda-oom-communicator-init"
    oom = next(c for c in d.results if c.id == "cuda-oom-activations-batch-too-large") if "cuda-oom-activations-batch-too-large" in ids(d) else None
    assert oom is None or oom.why.fingerprints == ()


def test_unrelated_text_abstains_with_nearest_entries(fixture_engine):
    d = fixture_engine.diagnose(report_from_text("my sourdough starter smells of acetone, is it dead?"))
    assert d.verdict == "abstain"
    assert d.abstain_reason
    assert d.confidence < fixture_engine.abstain_below


def test_json_contract(fixture_engine):
    d = fixture_engine.diagnose(report_from_text("RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB\nTraceback"))
    data = json.loads(json.dumps(d.to_json()))
    assert set(data) >= {"verdict", "confidence", "results", "elapsed_ms"}
    assert data["verdict"] in ("match", "abstain")
    first = data["results"][0]
    assert set(first) == {"id", "title", "score", "confidence", "why"}
    assert set(first["why"]) == {"fingerprints", "lexical", "dense"}
    assert first["why"]["fingerprints"][0]["line"] == 1
    assert 0.0 <= data["confidence"] <= 1.0
    assert len(data["results"]) <= 5


def test_decisive_fingerprint_skips_the_embedding_model(fixture_kb_dir, tmp_path):
    from bot.diagnose import Engine

    class ExplodingEmbedder:
        id = "exploding"
        dimension = 3

        def embed(self, texts):
            raise AssertionError("dense retrieval should not run")

    engine = Engine(load_kb(fixture_kb_dir), embedder=ExplodingEmbedder(), index_dir=tmp_path / "never")
    d = engine.diagnose(report_from_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\nTraceback"))
    assert ids(d)[0] == "cuda-oom-activations-batch-too-large"
    assert not (tmp_path / "never").exists()


def test_index_directory_manifest_and_staleness(tmp_path, embedder):
    kb_dir = write_kb(tmp_path / "kb", FIXTURE_ENTRIES[:3])
    kb = load_kb(kb_dir)
    index_dir = tmp_path / "index"
    assert store.staleness(index_dir, kb, embedder.id) == "no index yet"
    manifest = store.build(index_dir, kb, embedder)
    assert sorted(p.name for p in index_dir.iterdir()) == [store.EXPORTED_DIR, "faiss.index", "manifest.json"]
    on_disk = json.loads((index_dir / "manifest.json").read_text())
    assert on_disk["format"] == store.FORMAT_VERSION and on_disk["dimension"] == 384
    assert on_disk["entry_ids"] == kb.ids() and on_disk["kb_hash"] == kb.digest
    assert store.staleness(index_dir, kb, embedder.id) is None
    assert "model changed" in store.staleness(index_dir, kb, "another-model")
    write_kb(kb_dir, [entry_dict("new-entry", samples=["brand new one", "brand new two"])])
    changed = load_kb(kb_dir)
    assert store.staleness(index_dir, changed, embedder.id) == "the knowledge base changed"
    _, dense = store.load(index_dir)
    assert dense.index.ntotal == len(manifest.vector_entries)


def test_stale_index_is_rebuilt_on_use(tmp_path, embedder):
    from bot.diagnose import Engine

    kb_dir = write_kb(tmp_path / "kb", FIXTURE_ENTRIES[:2])
    index_dir = tmp_path / "index"
    store.build(index_dir, load_kb(kb_dir), embedder)
    write_kb(kb_dir, [FIXTURE_ENTRIES[3]])
    engine = Engine(load_kb(kb_dir), embedder=embedder, index_dir=index_dir)
    engine.ensure_index()
    assert json.loads((index_dir / "manifest.json").read_text())["entry_ids"] == engine.kb.ids()


def test_corrupt_index_is_detected(tmp_path, embedder):
    kb = load_kb(write_kb(tmp_path / "kb", FIXTURE_ENTRIES[:2]))
    index_dir = tmp_path / "index"
    store.build(index_dir, kb, embedder)
    (index_dir / "manifest.json").write_text("{not json")
    assert "manifest.json" in store.staleness(index_dir, kb, embedder.id)


def test_fingerprint_evidence_scoring():
    kb = load_kb_from(FIXTURE_ENTRIES)
    fps = FingerprintIndex(kb.entries)
    by_id = {e.id: i for i, e in enumerate(kb.entries)}
    ev = fps.scan("Call to ibv_modify_qp failed with error Connection timed out\ndcp.save(x)")
    seed = ev[by_id["roce-qp-timeout-during-checkpoint-save"]]
    rail = ev[by_id["nccl-rail-only-fabric-cross-nic-timeout"]]
    assert seed.strong and seed.score == pytest.approx(1.15)
    assert not rail.strong and rail.score == pytest.approx(0.35)


def load_kb_from(entries):
    import tempfile
    from pathlib import Path

    return load_kb(write_kb(Path(tempfile.mkdtemp()), entries))


def test_dense_scores_take_the_best_vector_per_entry():
    from index.dense import DenseIndex

    vectors = np.eye(4, dtype=np.float32)
    dense = DenseIndex.from_vectors(vectors, [0, 0, 1, 2], 3)
    scores = dense.scores(np.array([0.0, 0.6, 0.8, 0.0], dtype=np.float32))
    assert scores.tolist() == pytest.approx([0.6, 0.8, 0.0])
    assert dense.scores(np.array([0, 0.6, 0.8, 0], np.float32), skip_vectors=frozenset({2})).tolist() == pytest.approx([0.6, 0.0, 0.0])


def test_root_cause_outranks_a_collateral_entry(tmp_path, embedder):
    from bot.diagnose import Engine

    hub = entry_dict(
        "watchdog-hub",
        collateral=True,
        fingerprints=[{"pattern": r"Watchdog caught collective operation timeout", "strength": "strong"},
                      {"pattern": r"OpType=ALLREDUCE", "strength": "supporting"}],
        samples=["Watchdog caught collective operation timeout OpType=ALLREDUCE", "Watchdog caught collective operation timeout x"],
    )
    oom = entry_dict(
        "oom-root",
        category="memory",
        fingerprints=[{"pattern": r"CUDA out of memory", "strength": "strong"}],
        samples=["CUDA out of memory on rank 3", "torch.OutOfMemoryError: CUDA out of memory"],
    )
    engine = Engine(load_kb(write_kb(tmp_path / "kb", [hub, oom])), embedder=embedder, index_dir=tmp_path / "idx")
    log = "torch.OutOfMemoryError: CUDA out of memory\n" + "Watchdog caught collective operation timeout: OpType=ALLREDUCE\n" * 3
    assert ids(engine.diagnose(report_from_text(log)))[0] == "oom-root"
    assert ids(engine.diagnose(report_from_text("Watchdog caught collective operation timeout OpType=ALLREDUCE")))[0] == "watchdog-hub"
