#!/usr/bin/env python3
"""Models and reference data for tests/check_gather.c: embeddings (Gather
with int64/int32 ids read on the device), Slice/Split/Squeeze/Unsqueeze/
Expand/Cast.  Each model NAME.onnx comes with NAME/input_N.pb and
NAME/output_N.pb (the reference, PyTorch or numpy).
usage: gather_models.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper


def write(out, name, inputs, outputs):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    for k, a in enumerate(inputs):
        onnx.save_tensor(numpy_helper.from_array(a), os.path.join(d, "input_%d.pb" % k))
    for k, a in enumerate(outputs):
        onnx.save_tensor(numpy_helper.from_array(a), os.path.join(d, "output_%d.pb" % k))


class Embed(torch.nn.Module):
    """BERT's embedding: token rows plus position rows (arange ids, which
    the compiler folds into a constant), then a fused-QKV-like split of the
    last axis at multiples of 16."""

    def __init__(s, vocab, hidden, maxpos):
        super().__init__()
        s.tok = torch.nn.Embedding(vocab, hidden)
        s.pos = torch.nn.Embedding(maxpos, hidden)

    def forward(s, ids):
        p = torch.arange(ids.shape[1]).unsqueeze(0)
        x = s.tok(ids) + s.pos(p)
        return x, x[..., 16:48]


def main():
    out = sys.argv[1]
    torch.manual_seed(3)
    # token embedding alone, a row width that is not a multiple of 16;
    # torch's Embedding refuses negative ids, ONNX's Gather wraps them
    # (weight[-k], as numpy indexes), which is the reference here
    emb = torch.nn.Embedding(50, 40).eval()
    ids = torch.randint(0, 50, (2, 7))
    torch.onnx.export(emb, ids, os.path.join(out, "embed.onnx"), opset_version=14,
                      input_names=["ids"], output_names=["y"])
    ids_np = ids.numpy().copy()
    ids_np[0, 0], ids_np[1, 3], ids_np[1, 6] = -1, -50, 49
    w = emb.weight.detach().numpy()
    write(out, "embed", [ids_np], [w[ids_np]])
    # out of range (undefined in ONNX): the device clamps to the table
    ids_c = ids_np.copy()
    ids_c[0, 1], ids_c[1, 2] = 1000, -1000
    write(out, "embed_clamp", [ids_c], [w[np.clip(np.where(ids_c < 0, ids_c + 50, ids_c), 0, 49)]])
    # the same through torch for non-negative ids
    with torch.no_grad():
        write(out, "embed_torch", [ids.numpy()], [emb(ids).numpy()])

    m = Embed(100, 64, 32).eval()
    ids = torch.randint(0, 100, (1, 12))
    torch.onnx.export(m, ids, os.path.join(out, "embed_pos.onnx"), opset_version=14,
                      input_names=["ids"], output_names=["x", "q"], do_constant_folding=True)
    with torch.no_grad():
        x, q = m(ids)
    write(out, "embed_pos", [ids.numpy()], [x.numpy(), q.numpy()])

    # int32 indices along axis 1 of an activation (a 3-D table, rows of 5;
    # the 4-D output is laid out anew)
    rng = np.random.default_rng(5)
    c = lambda n, a: numpy_helper.from_array(np.array(a, np.int64), n)
    data = rng.standard_normal((3, 6, 5)).astype(np.float32)
    idx = np.array([[5, -1, 0], [2, 2, -6]], np.int32)
    nodes = [helper.make_node("Relu", ["d"], ["r"]),
             helper.make_node("Gather", ["r", "i"], ["y"], axis=1)]
    g = helper.make_graph(nodes, "gather_axis1",
                          [helper.make_tensor_value_info("d", TensorProto.FLOAT, data.shape),
                           helper.make_tensor_value_info("i", TensorProto.INT32, idx.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, "gather_axis1.onnx"))
    write(out, "gather_axis1", [data, idx], [np.take(np.maximum(data, 0), idx, axis=1)])

    # an integer input used as Gather's indices (read in place) and as a
    # value (converted to fp16 by the edge kernels) at once
    ax = numpy_helper.from_array(np.array([1], np.int64), "ax")
    g = helper.make_graph([helper.make_node("Gather", ["d", "i"], ["g"], axis=0),
                           helper.make_node("Cast", ["i"], ["c"], to=TensorProto.FLOAT),
                           helper.make_node("Unsqueeze", ["c", "ax"], ["u"]),
                           helper.make_node("Add", ["g", "u"], ["y"])],
                          "int_mixed",
                          [helper.make_tensor_value_info("d", TensorProto.FLOAT, [5, 3]),
                           helper.make_tensor_value_info("i", TensorProto.INT64, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [ax])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, "int_mixed.onnx"))
    dm = rng.standard_normal((5, 3)).astype(np.float32)
    im = np.array([4, 0, 2, 4], np.int64)
    write(out, "int_mixed", [dm, im], [dm[im] + im[:, None].astype(np.float32)])
    # constant indices on an activation, resolved at compile time (negative
    # ones count from the end; out of range is a compile error, as in ONNX:
    # tests/bad_inputs.sh)
    t = rng.standard_normal((4, 20)).astype(np.float32)
    g = helper.make_graph([helper.make_node("Relu", ["t"], ["r"]),
                           helper.make_node("Gather", ["r", "ci"], ["y"])], "gather_const",
                          [helper.make_tensor_value_info("t", TensorProto.FLOAT, t.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [c("ci", [[2, -1], [3, -4]])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, "gather_const.onnx"))
    write(out, "gather_const", [t], [np.maximum(t, 0)[[[2, 3], [3, 0]]]])

    # Slice (H of NC1HWC0, C at 16), Split, Unsqueeze/Squeeze, Expand, Cast
    x4 = rng.standard_normal((2, 40, 5, 3)).astype(np.float32)
    v3 = rng.standard_normal((5, 1, 24)).astype(np.float32)
    z3 = rng.standard_normal((3, 20, 50)).astype(np.float32)
    nodes = [
        helper.make_node("Slice", ["x", "s0", "e0", "a0"], ["sl"]),
        helper.make_node("Split", ["x", "sp"], ["p0", "p1"], axis=1),
        helper.make_node("Unsqueeze", ["v", "ua"], ["u"]),
        helper.make_node("Squeeze", ["u", "ua"], ["sq"]),
        helper.make_node("Unsqueeze", ["sq", "ua"], ["sq4"]),
        helper.make_node("Expand", ["sq4", "es"], ["ex"]),
        helper.make_node("Cast", ["ex"], ["ca"], to=TensorProto.FLOAT16),
        helper.make_node("Cast", ["ca"], ["y"], to=TensorProto.FLOAT),
        # the last axis at 5 (the lanes move), after the middle axis' box
        helper.make_node("Slice", ["z", "s1", "e1", "a1"], ["sl2"]),
    ]
    g = helper.make_graph(
        nodes, "shapes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x4.shape),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, v3.shape),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, z3.shape)],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
         for n in ("sl", "p0", "p1", "y", "sl2")],
        [c("s0", [16, 1]), c("e0", [1000, -1]), c("a0", [1, -2]), c("sp", [32, 8]),
         c("ua", [0]), c("es", [2, 5, 3, 24]),
         c("s1", [5, 2]), c("e1", [45, 19]), c("a1", [2, 1])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, "shapes.onnx"))
    write(out, "shapes", [x4, v3, z3], [x4[:, 16:, 1:4], x4[:, :32], x4[:, 32:],
                                        np.broadcast_to(v3, (2, 5, 3, 24)).astype(np.float32),
                                        z3[:, 2:19, 5:45]])


if __name__ == "__main__":
    main()
