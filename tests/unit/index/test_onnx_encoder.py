"""The ONNX Runtime encoder: agrees with sentence-transformers, is exported into the index and
recorded in its manifest, serves queries without torch, and an encoder that disagrees is refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from index import store
from index.embed import (
    EXPORTED_DIR,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    choose_embedder,
    file_sha256,
)
from kb.errors import TORCH_MISSING, EncoderDisagreementError, ModelNotFoundError, TorchMissingError
from kb.load import load_kb

pytestmark = pytest.mark.model  # these load all-MiniLM-L6-v2 and export it once per session

ROOT = Path(__file__).resolve().parents[3]
TEXTS = [
    "why does dcp.save hang at 64 GPUs?",
    "NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129",
    "x",
    # longer than max_seq_length (256 tokens): both encoders must truncate the same way
    "RuntimeError: CUDA error: an illegal memory access was encountered " * 40,
]


@pytest.fixture(scope="session")
def exported_index(fixture_kb_dir, embedder, tmp_path_factory):
    """The fixture KB's index built by the sentence-transformers encoder, which exports the ONNX file."""
    index_dir = tmp_path_factory.mktemp("onnx") / "index"
    manifest = store.build(index_dir, load_kb(fixture_kb_dir), embedder)
    return index_dir, manifest


@pytest.fixture(scope="session")
def onnx_embedder(exported_index, embedder):
    index_dir, _ = exported_index
    return OnnxEmbedder(index_dir / EXPORTED_DIR, embedder.id, model_source=embedder.model_source)


def test_onnx_vectors_agree_with_sentence_transformers(onnx_embedder, embedder):
    onnx_vectors = onnx_embedder.embed(TEXTS)
    torch_vectors = embedder.embed(TEXTS)
    assert onnx_vectors.shape == torch_vectors.shape == (len(TEXTS), 384)
    assert np.einsum("ij,ij->i", onnx_vectors, torch_vectors).min() >= 0.999
    assert np.allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-5)
    # a text alone and padded in a batch with longer ones gets the same vector
    assert float(onnx_embedder.embed([TEXTS[2]])[0] @ onnx_vectors[2]) >= 0.99999


def test_build_records_the_onnx_file_and_its_agreement(exported_index, onnx_embedder, fixture_kb_dir):
    index_dir, manifest = exported_index
    record = manifest.onnx
    assert record["source"] == "exported" and record["model"] == manifest.embedder
    assert record["sha256"] == file_sha256(index_dir / record["path"])
    assert record["export"]["opset"] and record["export"]["dynamic_axes"] == ["batch", "sequence"]
    agreement = record["agreement"]
    assert agreement["checked_texts"] == len(manifest.vector_hashes) and agreement["min_cosine"] >= 0.999
    kb = load_kb(fixture_kb_dir)
    assert store.staleness(index_dir, kb, onnx_embedder) is None
    # with the ONNX file in the index, the default (and explicit onnx) choice is the ONNX encoder
    for choice in (None, "onnx"):
        chosen = choose_embedder(choice, None, "unused-hub-name", index_dir)
        assert isinstance(chosen, OnnxEmbedder) and chosen.onnx_file == onnx_embedder.onnx_file
    assert isinstance(choose_embedder("torch", None, "unused-hub-name", index_dir), SentenceTransformerEmbedder)


def test_changed_onnx_file_makes_the_index_stale(exported_index, onnx_embedder, fixture_kb_dir, tmp_path):
    index_dir, manifest = exported_index
    copy = tmp_path / "index"
    shutil.copytree(index_dir, copy)
    kb = load_kb(fixture_kb_dir)
    embedder = OnnxEmbedder(copy / EXPORTED_DIR, manifest.embedder)
    assert store.staleness(copy, kb, embedder) is None
    with open(embedder.onnx_file, "ab") as handle:
        handle.write(b"\0")
    assert "ONNX encoder file changed" in store.staleness(copy, kb, embedder)
    # the vectors themselves do not depend on the encoder: by model id the index is still current
    assert store.staleness(copy, kb, manifest.embedder) is None


class FlippedEncoder(OnnxEmbedder):
    """A deliberately corrupted encoder: the real ONNX model with a quarter of each vector negated."""

    def _encode(self, batch):
        vectors = super()._encode(batch)
        vectors[:, : vectors.shape[1] // 4] *= -1
        return vectors


class NanEncoder(OnnxEmbedder):
    def _encode(self, batch):
        return np.full_like(super()._encode(batch), np.nan)


@pytest.mark.parametrize("corrupted", [FlippedEncoder, NanEncoder])
def test_disagreeing_encoder_is_refused_and_the_old_index_kept(
    corrupted, exported_index, embedder, fixture_kb_dir, tmp_path
):
    index_dir, _ = exported_index
    published = tmp_path / "index"
    shutil.copytree(index_dir, published)
    before = (published / store.MANIFEST).read_bytes()
    # a model directory that ships an ONNX file is used as is, and checked against sentence-transformers
    model_dir = tmp_path / "model"
    shutil.copytree(index_dir / EXPORTED_DIR, model_dir)
    encoder = corrupted(model_dir, embedder.id, model_source=embedder.model_source)
    with pytest.raises(EncoderDisagreementError, match="not published"):
        store.build(published, load_kb(fixture_kb_dir), encoder, force=True)
    assert (published / store.MANIFEST).read_bytes() == before
    assert not list(tmp_path.glob(".index-*"))  # no staging directory left behind


def test_model_directory_onnx_file_is_used_as_is(exported_index, embedder, fixture_kb_dir, tmp_path):
    index_dir, _ = exported_index
    model_dir = tmp_path / "model"
    shutil.copytree(index_dir / EXPORTED_DIR, model_dir)
    encoder = OnnxEmbedder(model_dir, embedder.id, model_source=embedder.model_source)
    manifest = store.build(tmp_path / "index", load_kb(fixture_kb_dir), encoder)
    assert manifest.onnx["source"] == "model-dir" and manifest.onnx["export"] is None
    assert Path(manifest.onnx["path"]) == encoder.onnx_file.resolve()
    assert not (tmp_path / "index" / EXPORTED_DIR).exists()
    assert manifest.onnx["agreement"]["min_cosine"] >= 0.999


def test_query_path_imports_neither_torch_nor_sentence_transformers(exported_index, fixture_kb_dir):
    """`traindoc ask` on a built index, in a fresh interpreter, then a look at sys.modules."""
    index_dir, _ = exported_index
    code = (
        "import json, sys\n"
        "from bot.cli import app\n"
        "try:\n"
        "    app(['ask', 'why does dcp.save hang at 64 GPUs?', '--json'])\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "heavy = ['torch', 'sentence_transformers', 'transformers']\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]))\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TRAINDOC_INDEX_DIR": str(index_dir),
        "TRAINDOC_KB_DIR": str(fixture_kb_dir),
    }
    env.pop("TRAINDOC_EMBEDDER", None)
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer, loaded = proc.stdout.strip().splitlines()[-2:]
    result = json.loads(answer)["results"][0]
    assert result["id"] == "roce-qp-timeout-during-checkpoint-save" and result["why"]["dense"] > 0
    assert json.loads(loaded) == []


def test_missing_torch_says_what_to_install(monkeypatch):
    from index import embed

    monkeypatch.setattr(embed, "torch_available", lambda: False)
    with pytest.raises(TorchMissingError, match="pip install torch"):
        SentenceTransformerEmbedder("unused", "unused").embed(["x"])


def test_unknown_embedder_choice_is_an_error(tmp_path):
    with pytest.raises(ModelNotFoundError, match="choose onnx or torch"):
        choose_embedder("tensorflow", None, "unused-hub-name", tmp_path)


def run_without_torch(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """`traindoc ARGS` in a fresh interpreter where torch and sentence-transformers are not installed
    (a None in sys.modules is what an uninstalled package looks like to import and find_spec)."""
    code = (
        "import sys\n"
        "for name in ('torch', 'sentence_transformers', 'transformers'):\n"
        "    sys.modules[name] = None\n"
        "from bot.cli import main\n"
        f"sys.argv = ['traindoc', *{args!r}]\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    env.pop("TRAINDOC_EMBEDDER", None)
    return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=120)


def test_without_torch_a_first_build_says_what_to_install(fixture_kb_dir, tmp_path):
    env = {"TRAINDOC_INDEX_DIR": str(tmp_path / "index"), "TRAINDOC_KB_DIR": str(fixture_kb_dir)}
    proc = run_without_torch(["index", "build"], env)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [f"traindoc: {TORCH_MISSING}"]
    assert not (tmp_path / "index").exists()


def test_without_torch_an_exported_index_rebuilds_and_answers(exported_index, fixture_kb_dir, tmp_path):
    index_dir, _ = exported_index
    copy = tmp_path / "index"
    shutil.copytree(index_dir, copy)
    env = {"TRAINDOC_INDEX_DIR": str(copy), "TRAINDOC_KB_DIR": str(fixture_kb_dir)}
    proc = run_without_torch(["index", "build", "--force"], env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = store.Manifest.read(copy).onnx
    assert record["source"] == "exported" and record["agreement"]["reference"] is None
    proc = run_without_torch(["ask", "all_to_all times out on our rail optimized fabric", "--json"], env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["results"][0]["id"] == "nccl-rail-only-fabric-cross-nic-timeout"
