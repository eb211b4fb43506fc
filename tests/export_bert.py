#!/usr/bin/env python3
"""Export a BERT-base-shaped encoder to ONNX with random weights, plus
seeded token ids and PyTorch's own output for each sequence length and
batch, in the ONNX backend-test layout:

    OUT/bert/model.onnx                       (dynamic batch and sequence)
    OUT/bert_s<seq>_b<batch>/test_data_set_0/input_0.pb, output_0.pb

usage: export_bert.py OUT SEQ:BATCH[,BATCH...] ... [--layers N]
       e.g. export_bert.py /tmp/bert 128:1,8 384:1

The model is what the transformer papers call BERT-base: token and position
embeddings, LayerNorm, 12 x nn.TransformerEncoderLayer (hidden 768, 12 heads,
FFN 3072, GELU, batch_first).  torch 1.13 exports LayerNorm decomposed
(ReduceMean/Sub/Pow/Sqrt/Div), GELU with Erf, attention as
MatMul/Transpose/Reshape/Softmax, and computes the shapes (Shape/Gather/
Concat/Range/...): with dynamic axes nothing is folded at export, so the
compiler has to fold the shape subgraphs once --input_shape fixes them.
Random weights are fine for checking arithmetic; LayerNorm's default
weight 1 and bias 0 would hide mistakes in their use, so they are
randomised too.  Deterministic: fixed seeds.
"""
import os
import sys

import onnx
import onnx.numpy_helper
import torch


class Bert(torch.nn.Module):
    def __init__(self, layers=12, vocab=30522, hidden=768, heads=12, ffn=3072, maxpos=512):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, hidden)
        self.pos = torch.nn.Embedding(maxpos, hidden)
        self.ln = torch.nn.LayerNorm(hidden, eps=1e-12)
        layer = torch.nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.0,
                                                 activation="gelu", batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        return self.enc(self.ln(self.tok(ids) + self.pos(pos)))


def build(layers):
    torch.manual_seed(0)
    model = Bert(layers)
    with torch.no_grad():
        # nn.TransformerEncoder deep-copies one layer: without this every
        # layer would hold the same weights (and the export would share them)
        for name, p in model.enc.named_parameters():
            if p.dim() >= 2:
                torch.nn.init.xavier_uniform_(p)
            else:
                p.uniform_(-0.1, 0.1)
        for m in model.modules():
            if isinstance(m, torch.nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    model.eval()
    return model


def write_pb(path, name, t):
    tp = onnx.numpy_helper.from_array(t.numpy(), name)
    with open(path, "wb") as f:
        f.write(tp.SerializeToString())


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    layers = 12
    for a in sys.argv[1:]:
        if a.startswith("--layers="):
            layers = int(a.split("=", 1)[1])
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = args[0]
    model = build(layers)
    d = os.path.join(out, "bert")
    os.makedirs(d, exist_ok=True)
    ids = torch.zeros(2, 16, dtype=torch.int64)
    torch.onnx.export(model, ids, os.path.join(d, "model.onnx"), opset_version=14,
                      input_names=["input_ids"], output_names=["output"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                    "output": {0: "batch", 1: "seq"}},
                      do_constant_folding=True)
    for spec in args[1:]:
        seq, batches = spec.split(":")
        for b in batches.split(","):
            seq_i, b_i = int(seq), int(b)
            g = torch.Generator().manual_seed(4321 + seq_i * 16 + b_i)
            ids = torch.randint(0, 30522, (b_i, seq_i), generator=g, dtype=torch.int64)
            with torch.no_grad():
                y = model(ids)
            t = os.path.join(out, f"bert_s{seq_i}_b{b_i}", "test_data_set_0")
            os.makedirs(t, exist_ok=True)
            write_pb(os.path.join(t, "input_0.pb"), "input_ids", ids)
            write_pb(os.path.join(t, "output_0.pb"), "output", y)
            print(os.path.dirname(t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
