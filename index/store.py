"""The on-disk index: a directory with manifest.json and faiss.index (no pickles).

The manifest records the format version, the embedder id and dimension, the KB digest and the
entry ids; an index whose KB or model differs is stale and is rebuilt, never used.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np

from index.dense import DenseIndex, dense_texts
from index.embed import Embedder
from kb.load import KnowledgeBase

FORMAT_VERSION = 2
MANIFEST = "manifest.json"
FAISS_FILE = "faiss.index"
BATCH = 128  # sentence-transformers sorts each batch by length: bigger batches pad less

Progress = Callable[[int, int], None]  # (done, total)


class IndexFormatError(RuntimeError):
    """The index directory is unreadable or was written by an incompatible version."""


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

    @classmethod
    def read(cls, directory: Path) -> Manifest:
        try:
            data = json.loads((directory / MANIFEST).read_text())
            return cls(**data)
        except (OSError, ValueError, TypeError) as exc:
            raise IndexFormatError(f"{directory / MANIFEST}: {exc}") from None


def staleness(directory: Path, kb: KnowledgeBase, embedder_id: str) -> str | None:
    """Why the index at `directory` cannot be used for this KB and model, or None if it can."""
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
    return None


def _text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _reusable_vectors(directory: Path, embedder_id: str) -> dict[str, np.ndarray]:
    """Vectors of the previous index, by text hash, when it was built with the same model."""
    try:
        manifest, dense = load(directory)
    except (IndexFormatError, TypeError):
        return {}
    if manifest.embedder != embedder_id or manifest.format != FORMAT_VERSION:
        return {}
    vectors = dense.index.reconstruct_n(0, dense.index.ntotal)
    return dict(zip(manifest.vector_hashes, vectors))


@contextmanager
def _build_lock(directory: Path):
    """One builder at a time per index directory (several processes may find it stale at once)."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    with open(directory.parent / f".{directory.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build(
    directory: Path, kb: KnowledgeBase, embedder: Embedder, progress: Progress | None = None, *, force: bool = False
) -> Manifest:
    """Embed every entry view (reusing the vectors of unchanged texts) and write the index
    atomically (temp dir, then rename)."""
    with _build_lock(directory):
        if not force and staleness(directory, kb, embedder.id) is None:  # another process just built it
            return Manifest.read(directory)
        return _build(directory, kb, embedder, progress)


def _build(directory: Path, kb: KnowledgeBase, embedder: Embedder, progress: Progress | None) -> Manifest:
    started = time.perf_counter()
    texts = dense_texts(kb.entries)
    hashes = [_text_hash(t.text) for t in texts]
    known = _reusable_vectors(directory, embedder.id) if directory.exists() else {}
    todo = sorted({h: t.text for h, t in zip(hashes, texts) if h not in known}.items())
    for start in range(0, len(todo), BATCH):
        batch = todo[start : start + BATCH]
        for (h, _), vector in zip(batch, embedder.embed([text for _, text in batch])):
            known[h] = vector
        if progress:
            progress(min(start + BATCH, len(todo)), len(todo))
    vectors = (
        np.vstack([known[h] for h in hashes]).astype(np.float32)
        if hashes
        else np.zeros((0, embedder.dimension), dtype=np.float32)
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
    )
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".index-", dir=directory.parent))
    try:
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
    return manifest


def load(directory: Path) -> tuple[Manifest, DenseIndex]:
    manifest = Manifest.read(directory)
    try:
        index = faiss.read_index(str(directory / FAISS_FILE))
    except RuntimeError as exc:
        raise IndexFormatError(f"{directory / FAISS_FILE}: {exc}") from None
    if index.ntotal != len(manifest.vector_entries) or index.d != manifest.dimension:
        raise IndexFormatError(f"{directory}: faiss.index does not match its manifest")
    return manifest, DenseIndex(index, manifest.vector_entries, len(manifest.entry_ids))
