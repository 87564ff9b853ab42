"""Export a sentence-transformers model's transformer to ONNX, as a directory the ONNX encoder
reads.

The bundle is a small sentence-transformers-shaped directory: `onnx/model.onnx` plus the model's
own tokenizer.json, modules.json, sentence_bert_config.json and pooling config, so the encoder
(index/embed.py OnnxEmbedder) needs nothing but this directory, onnxruntime and tokenizers.
Only this module and the sentence-transformers encoder import torch.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from index.embed import ONNX_CANDIDATES, torch_available
from kb.errors import ModelNotFoundError, TorchMissingError

OPSET = 17  # supported by torch's TorchScript exporter and by every onnxruntime since 1.11
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"
COPIED = ("tokenizer.json", "modules.json", "sentence_bert_config.json", "config.json")

# Exports made by this process, by (source, model id): a process that builds several indexes of the
# same model (the test suite, a calibration run) exports once. Copied, not linked, so an edit to
# one index's file never reaches another; every build still checks its encoder against the
# reference.
_exported: dict[tuple[str, str], tuple[Path, dict]] = {}


def export_once(source: str, model_id: str, target: Path) -> dict:
    """export() into `target`, reusing this process's earlier export of the same model."""
    key = (source, model_id)
    if key not in _exported or not (_exported[key][0] / ONNX_CANDIDATES[0]).is_file():
        scratch = Path(tempfile.mkdtemp(prefix="traindoc-onnx-"))
        atexit.register(shutil.rmtree, scratch, True)
        _exported[key] = (scratch / "bundle", export(source, scratch / "bundle"))
    bundle, settings = _exported[key]
    shutil.copytree(bundle, target)
    return dict(settings)


def model_directory(source: str) -> Path:
    """A local directory for `source` (a path, or a hub name already in the local hub cache)."""
    if Path(source).is_dir():
        return Path(source)
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(source, local_files_only=True))
    except (
        ImportError,
        OSError,
        ValueError,
    ) as exc:  # not cached (OSError), not a repo name (ValueError)
        raise ModelNotFoundError(
            f"cannot find a local copy of {source!r} to export to ONNX: {exc}"
        ) from None


def export(source: str, target: Path) -> dict:
    """Write the ONNX bundle of the model at `source` into `target`; returns the export settings."""
    if not torch_available():
        raise TorchMissingError()
    model_dir = model_directory(source)
    target.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        shutil.copy2(model_dir / name, target / name)
    for module in json.loads((model_dir / "modules.json").read_text()):
        # the pooling / normalize configs
        if module["path"] and (model_dir / module["path"]).is_dir():
            shutil.copytree(model_dir / module["path"], target / module["path"], dirs_exist_ok=True)
    onnx_file = target / ONNX_CANDIDATES[0]
    onnx_file.parent.mkdir(parents=True, exist_ok=True)

    import torch
    import transformers
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()
    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()

    # eager attention traces to plain MatMul/Softmax; the fused SDPA path is not needed at this size
    model = transformers.AutoModel.from_pretrained(
        str(model_dir), attn_implementation="eager", local_files_only=True
    ).eval()

    class LastHiddenState(torch.nn.Module):
        """Keyword arguments in, one tensor out (BertModel.forward's positional order varies by
        version)."""

        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    # a padded example, so the traced graph keeps the attention-mask path
    ids = torch.tensor(
        [[101, 7592, 2088, 102, 0, 0], [101, 7592, 2088, 2003, 2182, 102]], dtype=torch.long
    )
    mask = (ids != 0).long()
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUTS, OUTPUT)}
    with warnings.catch_warnings(), torch.no_grad():
        # the TorchScript exporter's deprecation notice and tracer notes are expected here
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHiddenState(model),
            (ids, mask, torch.zeros_like(ids)),
            str(onnx_file),
            input_names=list(INPUTS),
            output_names=[OUTPUT],
            dynamic_axes=axes,
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
    return {
        "exporter": "torch.onnx.export (TorchScript, dynamo=False)",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "opset": OPSET,
        "inputs": list(INPUTS),
        "output": OUTPUT,
        "dynamic_axes": ["batch", "sequence"],
        "attention": "eager",
    }
