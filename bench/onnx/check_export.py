#!/usr/bin/env python3
"""Checks export_minilm.py's graph without Rust: ONNX Runtime's mean-pooled vectors against a
numpy transcription of tinytools' BertEmbedder (tinytools/src/rank/embedding/bert.rs), texts
padded in one batch, and the weather pair's cosine that bert.rs's doc test asserts (0.666).

    python bench/onnx/check_export.py target/models/all-MiniLM-L6-v2 target/models/all-MiniLM-L6-v2.onnx

MiniLM's shapes (6 layers, 12 heads of 32) are written in; its tokenizer is a plain ASCII
WordPiece, enough for the texts below; bench's `ort_embedder`
test compares the Rust `OrtEmbedder` with `BertEmbedder` itself on harder texts.
"""
import json, re, sys, time
import numpy as np
from math import erf
from safetensors.numpy import load_file
import onnxruntime as ort
d = sys.argv[1]
vocab = json.load(open(d + '/tokenizer.json'))['model']['vocab']
def wordpiece(text):
    ids = [vocab['[CLS]']]
    for word in re.findall(r"\w+|[^\w\s]", text.lower()):
        start, pieces = 0, []
        while start < len(word):
            end = len(word)
            while end > start and (('##' if start else '') + word[start:end]) not in vocab: end -= 1
            if end == start: pieces = [vocab['[UNK]']]; break
            pieces.append(vocab[('##' if start else '') + word[start:end]]); start = end
        ids += pieces
    return ids + [vocab['[SEP]']]
t = {k.removeprefix('bert.'): v for k, v in load_file(d + '/model.safetensors').items()}
verf = np.vectorize(erf)
def ln(x, p): 
    m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-12) * t[p + '.weight'] + t[p + '.bias']
def lin(x, p): return x @ t[p + '.weight'].T + t[p + '.bias']
def reference(ids):
    x = t['embeddings.word_embeddings.weight'][ids] + t['embeddings.position_embeddings.weight'][:len(ids)] + t['embeddings.token_type_embeddings.weight'][0]
    x = ln(x, 'embeddings.LayerNorm')
    for i in range(6):
        p = f'encoder.layer.{i}'
        q, k, v = (lin(x, f'{p}.attention.self.{n}').reshape(len(ids), 12, 32).transpose(1, 0, 2) for n in ('query', 'key', 'value'))
        s = q @ k.transpose(0, 2, 1) / np.sqrt(32); s = np.exp(s - s.max(-1, keepdims=True)); s /= s.sum(-1, keepdims=True)
        c = (s @ v).transpose(1, 0, 2).reshape(len(ids), 384)
        a = ln(lin(c, f'{p}.attention.output.dense') + x, f'{p}.attention.output.LayerNorm')
        h = lin(a, f'{p}.intermediate.dense'); h = 0.5 * h * (1 + verf(h / np.sqrt(2)))
        x = ln(lin(h, f'{p}.output.dense') + a, f'{p}.output.LayerNorm')
    m = x.mean(0); return m / np.linalg.norm(m)
texts = ["The weather is lovely today.", "It's so sunny outside!", "Find me a one-bedroom apartment in Portland.", "get_weather: Returns the forecast for a city"]
ids = [wordpiece(s) for s in texts]
width = max(map(len, ids))
pad = np.zeros((len(ids), width), dtype=np.int64); mask = np.zeros_like(pad)
for r, row in enumerate(ids): pad[r, :len(row)] = row; mask[r, :len(row)] = 1
opts = ort.SessionOptions(); opts.intra_op_num_threads = 1
s = ort.InferenceSession(sys.argv[2], opts)
out = s.run(['last_hidden_state'], {'input_ids': pad, 'attention_mask': mask, 'token_type_ids': np.zeros_like(pad)})[0]
onnx_vecs = []
for r, row in enumerate(ids):
    m = out[r, :len(row)].mean(0); onnx_vecs.append(m / np.linalg.norm(m))
for text, row, o in zip(texts, ids, onnx_vecs):
    print(f'{float(o @ reference(np.array(row))):.7f} cosine(onnx, numpy BertEmbedder) {text!r}')
print(f'weather pair cosine (bert.rs doc test: 0.666): onnx {float(onnx_vecs[0] @ onnx_vecs[1]):.4f}')
print('onnxruntime', ort.__version__)
