#!/usr/bin/env python3
"""Writes the ONNX graph of a BERT-family sentence encoder (all-MiniLM-L6-v2) by hand.

No torch: the graph is built node by node with the `onnx` package from the model
directory's `config.json` and `model.safetensors`, computing what tinytools' `BertEmbedder`
computes (tinytools/src/rank/embedding/bert.rs): word + position + token-type-0 embeddings,
LayerNorm, then per layer self-attention (padding masked out), residual + LayerNorm,
dense + GELU (exact, erf) + dense, residual + LayerNorm.

Inputs (int64, [batch, sequence]): input_ids, attention_mask, token_type_ids.
Output: last_hidden_state (float32, [batch, sequence, hidden]). Mean pooling over the
attention mask and unit length stay in Rust (bench's `OrtEmbedder`), as in `BertEmbedder`.

    python -m venv /work/scratch/h49-ort-venv
    /work/scratch/h49-ort-venv/bin/pip install onnxruntime==1.31.1 onnx numpy safetensors
    /work/scratch/h49-ort-venv/bin/python bench/onnx/export_minilm.py \
        target/models/all-MiniLM-L6-v2 target/models/all-MiniLM-L6-v2/model.onnx

The weights go in the .onnx file itself (about 90 MB for MiniLM).
"""

import json
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

OPSET = 17  # LayerNormalization is a standard op from 17 on.
IR_VERSION = 8  # what opset 17 needs; any ONNX Runtime from 1.13 on reads it.


def main(model_dir: Path, out: Path) -> None:
    config = json.loads((model_dir / "config.json").read_text())
    if config.get("hidden_act", "gelu") != "gelu":
        sys.exit(f"activation {config['hidden_act']!r}: only gelu is exported")
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    if hidden % heads:
        sys.exit("hidden_size must split evenly across the heads")
    head_width = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
    layers = config["num_hidden_layers"]

    raw = load_file(str(model_dir / "model.safetensors"))
    tensors = {name.removeprefix("bert."): value for name, value in raw.items()}

    initializers = []
    nodes = []

    def weight(name: str, value=None) -> str:
        array = tensors[name] if value is None else value
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def constant(name: str, value) -> str:
        initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    counter = [0]

    def node(op: str, inputs, **attrs) -> str:
        counter[0] += 1
        out_name = f"{op.lower()}_{counter[0]}"
        nodes.append(helper.make_node(op, list(inputs), [out_name], **attrs))
        return out_name

    def linear(x: str, prefix: str) -> str:
        # PyTorch stores [out, in]; MatMul wants [in, out].
        w = weight(f"{prefix}.weight.T", tensors[f"{prefix}.weight"].T)
        return node("Add", [node("MatMul", [x, w]), weight(f"{prefix}.bias")])

    def layer_norm(x: str, prefix: str) -> str:
        return node(
            "LayerNormalization",
            [x, weight(f"{prefix}.weight"), weight(f"{prefix}.bias")],
            axis=-1,
            epsilon=eps,
        )

    # Embeddings: word + position + token type.
    word = node("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"], axis=0)
    shape = node("Shape", ["input_ids"])
    length = node("Gather", [shape, constant("one_i64", np.array(1, dtype=np.int64))], axis=0)
    positions = node(
        "Range",
        [constant("zero_i64", np.array(0, dtype=np.int64)), length, constant("step_i64", np.array(1, dtype=np.int64))],
    )
    position = node("Gather", [weight("embeddings.position_embeddings.weight"), positions], axis=0)
    token_type = node("Gather", [weight("embeddings.token_type_embeddings.weight"), "token_type_ids"], axis=0)
    x = node("Add", [node("Add", [word, position]), token_type])
    x = layer_norm(x, "embeddings.LayerNorm")

    # The additive mask: 0 on real tokens, -10000 on padding, as [batch, 1, 1, sequence].
    mask = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = node("Sub", [constant("one_f32", np.array(1.0, dtype=np.float32)), mask])
    mask = node("Mul", [mask, constant("minus_large", np.array(-10000.0, dtype=np.float32))])
    mask = node("Unsqueeze", [mask, constant("axes_1_2", np.array([1, 2], dtype=np.int64))])

    split_heads = constant("split_heads", np.array([0, 0, heads, head_width], dtype=np.int64))
    merge_heads = constant("merge_heads", np.array([0, 0, hidden], dtype=np.int64))
    scale = constant("scale", np.array(1.0 / np.sqrt(head_width), dtype=np.float32))
    half = constant("half", np.array(0.5, dtype=np.float32))
    inv_sqrt2 = constant("inv_sqrt2", np.array(1.0 / np.sqrt(2.0), dtype=np.float32))

    for i in range(layers):
        p = f"encoder.layer.{i}"
        q = node("Transpose", [node("Reshape", [linear(x, f"{p}.attention.self.query"), split_heads])], perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [linear(x, f"{p}.attention.self.key"), split_heads])], perm=[0, 2, 3, 1])
        v = node("Transpose", [node("Reshape", [linear(x, f"{p}.attention.self.value"), split_heads])], perm=[0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), scale]), mask])
        probs = node("Softmax", [scores], axis=-1)
        context = node("Reshape", [node("Transpose", [node("MatMul", [probs, v])], perm=[0, 2, 1, 3]), merge_heads])
        attended = node("Add", [linear(context, f"{p}.attention.output.dense"), x])
        attended = layer_norm(attended, f"{p}.attention.output.LayerNorm")
        inner = linear(attended, f"{p}.intermediate.dense")
        # GELU, exact: 0.5 · x · (1 + erf(x / √2)).
        erf = node("Erf", [node("Mul", [inner, inv_sqrt2])])
        inner = node("Mul", [node("Mul", [inner, half]), node("Add", [erf, constant(f"one_f32_{i}", np.array(1.0, dtype=np.float32))])])
        output = node("Add", [linear(inner, f"{p}.output.dense"), attended])
        x = layer_norm(output, f"{p}.output.LayerNorm")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))

    ids = ["batch", "sequence"]
    graph = helper.make_graph(
        nodes,
        "minilm",
        [helper.make_tensor_value_info(name, TensorProto.INT64, ids) for name in ("input_ids", "attention_mask", "token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tinytools export_minilm.py")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(out))
    print(f"wrote {out}: {layers} layers, hidden {hidden}, {heads} heads, eps {eps}, {out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: export_minilm.py MODEL_DIR OUT.onnx")
    main(Path(sys.argv[1]), Path(sys.argv[2]))
