"""The on-disk index: a directory with manifest.json, faiss.index and the ONNX encoder (no pickles).

The manifest records the format version, the embedding model id and dimension, the KB digest, the
entry ids and the ONNX encoder (file, sha256, export settings, agreement with
sentence-transformers).
An index whose KB, model or ONNX file differs is stale and is rebuilt, never used.

Both encoders (sentence-transformers and ONNX Runtime) run the same model, so the vectors do not
depend on which one built the index; the build proves it: every text it embeds is encoded by both
and an index whose encoders disagree (cosine below AGREEMENT) is refused, never published.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np

from index.dense import DenseIndex, dense_texts
from index.embed import (
    EXPORTED_DIR,
    Embedder,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    file_sha256,
    torch_available,
)
from kb.errors import EncoderDisagreementError, IndexFormatError, TorchMissingError
from kb.load import KnowledgeBase

log = logging.getLogger(__name__)

FORMAT_VERSION = 3
MANIFEST = "manifest.json"
FAISS_FILE = "faiss.index"
BATCH = 128  # sentence-transformers sorts each batch by length: bigger batches pad less
AGREEMENT = 0.999  # least cosine between the two encoders' vectors of one text

Progress = Callable[[int, int], None]  # (done, total)


@dataclass(frozen=True)
class Manifest:
    format: int
    embedder: str
    dimension: int
    kb_hash: str
    entry_ids: list[str]
    vector_entries: list[int]
    vector_kinds: list[str]
    vector_hashes: list[str]  # sha1 of each embedded text: a rebuild re-embeds only what changed
    built_seconds: float
    # {"source": "exported"|"model-dir", "path", "sha256", "stat", "export", "agreement", "model"}
    # or None
    onnx: dict | None = None

    @classmethod
    def read(cls, directory: Path) -> Manifest:
        try:
            data = json.loads((directory / MANIFEST).read_text())
            return cls(**data)
        except (OSError, ValueError, TypeError) as exc:
            raise IndexFormatError(f"{directory / MANIFEST}: {exc}") from None


def staleness(directory: Path, kb: KnowledgeBase, embedder: Embedder | str) -> str | None:
    """Why the index at `directory` cannot be used for this KB and encoder, or None if it can.
    `embedder` may be just a model id (then the ONNX file is not checked)."""
    embedder_id = embedder if isinstance(embedder, str) else embedder.id
    if not (directory / MANIFEST).exists() or not (directory / FAISS_FILE).exists():
        return "no index yet"
    try:
        manifest = Manifest.read(directory)
    except IndexFormatError as exc:
        return str(exc)
    if manifest.format != FORMAT_VERSION:
        return f"index format {manifest.format}, this traindoc reads {FORMAT_VERSION}"
    if manifest.kb_hash != kb.digest or manifest.entry_ids != kb.ids():
        return "the knowledge base changed"
    if manifest.embedder != embedder_id:
        return f"the embedding model changed ({manifest.embedder} -> {embedder_id})"
    if isinstance(embedder, OnnxEmbedder):
        return _onnx_staleness(directory, manifest.onnx, embedder)
    return None


def _onnx_staleness(directory: Path, record: dict | None, embedder: OnnxEmbedder) -> str | None:
    if record is None:
        return "the index has no ONNX encoder yet"
    path = embedder.onnx_file
    if not path.is_file():
        return f"the ONNX encoder {path} is missing"
    if _onnx_path(directory, record) != path.resolve():
        return f"the index was checked against another ONNX file ({record['path']})"
    if onnx_digest(path, record) != record["sha256"]:
        return f"the ONNX encoder file changed ({path})"
    return None


def _onnx_path(directory: Path, record: dict) -> Path:
    return (directory / record["path"]).resolve()  # an absolute path stays itself


def _stat_key(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def onnx_digest(path: Path, record: dict | None = None) -> str:
    """sha256 of the ONNX file. Hashing 90 MB costs ~0.4 s, too much for every cold start, so (as
    git does for its index) the recorded digest stands while size, mtime and inode are the recorded
    ones; any write to the file changes its mtime and forces a real hash."""
    if record is not None and record.get("stat") == _stat_key(path):
        return record["sha256"]
    return file_sha256(path)


def _text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _reusable_vectors(
    directory: Path, embedder_id: str, onnx: dict | None
) -> dict[str, np.ndarray]:
    """Vectors of the previous index, by text hash, when it was built with the same model and its
    texts were checked against the same ONNX file (same bytes, same place)."""
    try:
        manifest, dense = load(directory)
    except (IndexFormatError, TypeError):
        return {}

    def same_file(record: dict | None) -> tuple[str, str] | None:
        return (record["sha256"], record["path"]) if record else None

    if (
        manifest.embedder != embedder_id
        or manifest.format != FORMAT_VERSION
        or same_file(manifest.onnx) != same_file(onnx)
    ):
        return {}
    vectors = dense.index.reconstruct_n(0, dense.index.ntotal)
    return dict(zip(manifest.vector_hashes, vectors, strict=False))


@contextmanager
def _build_lock(directory: Path) -> Iterator[None]:
    """One builder at a time per index directory (several processes may find it stale at once)."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    with open(directory.parent / f".{directory.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build(
    directory: Path,
    kb: KnowledgeBase,
    embedder: Embedder,
    progress: Progress | None = None,
    *,
    force: bool = False,
) -> Manifest:
    """Embed every entry view (reusing the vectors of unchanged texts) and write the index
    atomically (temp dir, then rename)."""
    with _build_lock(directory):
        # another process just built it
        if not force and staleness(directory, kb, embedder) is None:
            return Manifest.read(directory)
        return _build(directory, kb, embedder, progress)


def _build(
    directory: Path, kb: KnowledgeBase, embedder: Embedder, progress: Progress | None
) -> Manifest:
    started = time.perf_counter()
    texts = dense_texts(kb.entries)
    hashes = [_text_hash(t.text) for t in texts]
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".index-", dir=directory.parent))
    try:
        onnx, record = _onnx_encoder(directory, staging, embedder)
        primary, other = _encoder_pair(embedder, onnx)
        known = _reusable_vectors(directory, embedder.id, record) if directory.exists() else {}
        pending = {h: t.text for h, t in zip(hashes, texts, strict=False) if h not in known}
        todo = sorted(pending.items())
        worst = (1.0, "")
        for start in range(0, len(todo), BATCH):
            batch = [text for _, text in todo[start : start + BATCH]]
            vectors = primary.embed(batch)
            if other is not None:
                # a broken encoder may give NaN, which compares false to everything: count it as -1
                cosines = np.nan_to_num(
                    np.einsum("ij,ij->i", vectors, other.embed(batch)), nan=-1.0
                )
                k = int(np.argmin(cosines))
                worst = min(worst, (float(cosines[k]), batch[k]))
            for (h, _), vector in zip(todo[start : start + BATCH], vectors, strict=False):
                known[h] = vector
            if progress:
                progress(min(start + BATCH, len(todo)), len(todo))
        if worst[0] < AGREEMENT:
            raise EncoderDisagreementError(
                f"the ONNX and sentence-transformers encoders disagree (cosine {worst[0]:.4f} "
                f"< {AGREEMENT} on "
                f"{worst[1][:80]!r}): the index was not published; rebuild with --force to "
                "re-export "
                f"or set TRAINDOC_EMBEDDER=torch"
            )
        if record is not None:
            record["agreement"] = {
                "reference": "sentence-transformers" if other is not None else None,
                "checked_texts": len(todo) if other is not None else 0,
                "reused_texts": len(texts) - len(todo),
                "min_cosine": round(worst[0], 6) if other is not None and todo else None,
                "threshold": AGREEMENT,
            }
        vectors = (
            np.vstack([known[h] for h in hashes]).astype(np.float32)
            if hashes
            else np.zeros((0, primary.dimension), dtype=np.float32)
        )
        dense = DenseIndex.from_vectors(vectors, [t.entry for t in texts], len(kb.entries))
        manifest = Manifest(
            format=FORMAT_VERSION,
            embedder=embedder.id,
            dimension=int(vectors.shape[1]),
            kb_hash=kb.digest,
            entry_ids=kb.ids(),
            vector_entries=[t.entry for t in texts],
            vector_kinds=[f"{t.kind}:{t.ordinal}" for t in texts],
            vector_hashes=hashes,
            built_seconds=round(time.perf_counter() - started, 3),
            onnx=record,
        )
        faiss.write_index(dense.index, str(staging / FAISS_FILE))
        (staging / MANIFEST).write_text(json.dumps(manifest.__dict__, indent=1))
        backup = directory.with_name(directory.name + ".old")
        if directory.exists():
            shutil.rmtree(backup, ignore_errors=True)
            os.replace(directory, backup)
        os.replace(staging, directory)
        shutil.rmtree(backup, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if isinstance(embedder, OnnxEmbedder):
        embedder.reset()  # its file may have just been replaced
    return manifest


def _onnx_encoder(
    directory: Path, staging: Path, embedder: Embedder
) -> tuple[OnnxEmbedder | None, dict | None]:
    """The ONNX encoder the new index is published with, and its manifest record: the model
    directory's own ONNX file as is; else the previous index's export when it is intact; else a
    fresh export into the staging directory (needs torch). None when the export is impossible and
    the index is served by sentence-transformers anyway."""
    exported_dir = (directory / EXPORTED_DIR).resolve()
    if isinstance(embedder, OnnxEmbedder) and embedder.model_dir.resolve() != exported_dir:
        path = embedder.onnx_file.resolve()
        return embedder, {
            "source": "model-dir",
            "model": embedder.id,
            "path": str(path),
            "sha256": file_sha256(path),
            "stat": _stat_key(path),
            "export": None,
        }
    source = getattr(embedder, "model_source", None)
    target = staging / EXPORTED_DIR
    record = _previous_export(directory, embedder.id)
    if record is not None:
        shutil.copytree(directory / EXPORTED_DIR, target, copy_function=_link_or_copy)
    else:
        from index import onnx_export

        try:
            settings = onnx_export.export_once(source or "", embedder.id, target)
        except Exception as exc:
            if isinstance(embedder, OnnxEmbedder) or isinstance(exc, TorchMissingError):
                raise
            log.warning("ONNX export failed, the index is served by sentence-transformers: %s", exc)
            return None, None
        record = {"source": "exported", "model": embedder.id, "export": settings}
    onnx = OnnxEmbedder(target, embedder.id, model_source=source)
    path = onnx.onnx_file
    record.update(
        path=str(path.relative_to(staging)), sha256=file_sha256(path), stat=_stat_key(path)
    )
    return onnx, record


def _previous_export(directory: Path, model_id: str) -> dict | None:
    """The previous index's exported ONNX record when its file is intact and of the same model."""
    try:
        record = Manifest.read(directory).onnx
    except IndexFormatError:
        return None
    if not record or record.get("source") != "exported" or record.get("model") != model_id:
        return None
    path = directory / record["path"]
    if not path.is_file() or file_sha256(path) != record["sha256"]:
        return None
    return {k: record[k] for k in ("source", "model", "export")}


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _encoder_pair(
    embedder: Embedder, onnx: OnnxEmbedder | None
) -> tuple[Embedder, Embedder | None]:
    """(the encoder whose vectors are stored, the one they are checked against). The configured
    encoder computes the vectors (its staged copy for an exported ONNX file); sentence-transformers
    is the reference when torch is installed; without torch an ONNX file is trusted as checked
    before."""
    if not isinstance(embedder, OnnxEmbedder):
        return embedder, onnx
    if onnx is None:
        raise AssertionError("an ONNX encoder always has its ONNX file")
    if not torch_available():
        log.warning(
            "torch is not installed: the ONNX encoder is not re-checked against "
            "sentence-transformers"
        )
        return onnx, None
    return onnx, SentenceTransformerEmbedder(embedder.model_source, embedder.id)


def load(directory: Path) -> tuple[Manifest, DenseIndex]:
    manifest = Manifest.read(directory)
    try:
        index = faiss.read_index(str(directory / FAISS_FILE))
    except RuntimeError as exc:
        raise IndexFormatError(f"{directory / FAISS_FILE}: {exc}") from None
    if index.ntotal != len(manifest.vector_entries) or index.d != manifest.dimension:
        raise IndexFormatError(f"{directory}: faiss.index does not match its manifest")
    return manifest, DenseIndex(index, manifest.vector_entries, len(manifest.entry_ids))
