#!/usr/bin/env python3
"""Small MatMul/Gemm graphs for tests/check_matmul.c: batched products,
folded Transposes, broadcasting, the bias fusion.  For each NAME: NAME.onnx,
its inputs NAME.in0, NAME.in1 (float32, graph input order) and numpy's
output NAME.ref.  Values are multiples of 1/8 in [-2, 2]: exact in fp16, so
products and their fp32 sums are exact and only the fp16 result rounds.
usage: matmul_models.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def det(shape, k):
    n = int(np.prod(shape))
    v = ((np.arange(n) * 37 + 11 * k) % 33 - 16) / 8.0
    return v.reshape(shape).astype(np.float32)


def save(out, name, nodes, ins, inits, y):
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in ins]
    yo = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))
    g = helper.make_graph(nodes, name, vi, [yo],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(m)
    m = onnx.shape_inference.infer_shapes(m)  # value infos: the pass test runs it alone
    onnx.save(m, os.path.join(out, name + ".onnx"))
    for k, (_, a) in enumerate(ins):
        a.tofile(os.path.join(out, "%s.in%d" % (name, k)))
    y.astype(np.float32).tofile(os.path.join(out, name + ".ref"))


def mm(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def main():
    out = sys.argv[1]
    T, MM = "Transpose", "MatMul"
    # attention's scores: K [S, BH, 64] -> (1, 2, 0) -> [BH, 64, S], read in place
    q, k = det([6, 32, 64], 0), det([32, 6, 64], 1)
    save(out, "attn_qk", [helper.make_node(T, ["k"], ["kt"], perm=[1, 2, 0]),
                          helper.make_node(MM, ["q", "kt"], ["y"])],
         [("q", q), ("k", k)], [], mm(q, k.transpose(1, 2, 0)))
    # attention's context: V [S, BH, 64] -> (1, 0, 2), rows 12*64 apart
    p, v = det([6, 32, 32], 2), det([32, 6, 40], 3)
    save(out, "attn_pv", [helper.make_node(T, ["v"], ["vt"], perm=[1, 0, 2]),
                          helper.make_node(MM, ["p", "vt"], ["y"])],
         [("p", p), ("v", v)], [], mm(p, v.transpose(1, 0, 2)))
    # swap of the last two axes on both operands: A^T and B^T read in place
    a, b = det([5, 24, 20], 4), det([5, 40, 24], 5)
    save(out, "swap_both", [helper.make_node(T, ["a"], ["at"], perm=[0, 2, 1]),
                            helper.make_node(T, ["b"], ["bt"], perm=[0, 2, 1]),
                            helper.make_node(MM, ["at", "bt"], ["y"])],
         [("a", a), ("b", b)], [], mm(a.transpose(0, 2, 1), b.transpose(0, 2, 1)))
    # a 2-D activation B over a 3-D A: one GEMM of 3*20 rows
    a, b = det([3, 20, 40], 6), det([40, 50], 7)
    save(out, "bcast_2d", [helper.make_node(MM, ["a", "b"], ["y"])],
         [("a", a), ("b", b)], [], mm(a, b))
    # B [1, K, N] shared by a transposed A's batch: B batch stride 0
    x, b = det([4, 24, 20], 8), det([1, 24, 36], 9)
    save(out, "bstride0", [helper.make_node(T, ["x"], ["xt"], perm=[0, 2, 1]),
                           helper.make_node(MM, ["xt", "b"], ["y"])],
         [("x", x), ("b", b)], [], mm(x.transpose(0, 2, 1), b))
    # general broadcasting of rank 5 with rank 4 (an NC1HWC0 operand)
    a, b = det([2, 3, 1, 10, 16], 10), det([3, 4, 16, 12], 11)
    save(out, "bcast_5d", [helper.make_node(MM, ["a", "b"], ["y"])],
         [("a", a), ("b", b)], [], mm(a, b))
    # a batched constant B
    a = det([3, 20, 24], 12)
    w = det([3, 24, 30], 13)
    save(out, "const_b3", [helper.make_node(MM, ["a", "w"], ["y"])],
         [("a", a)], [("w", w)], mm(a, w))
    # Gemm with both operands activations, transposed, and a bias
    a, b, c = det([24, 20], 14), det([30, 24], 15), det([30], 16)
    save(out, "gemm_tt", [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1,
                                           transB=1, alpha=0.5)],
         [("a", a), ("b", b)], [("c", c)], 0.5 * mm(a.T, b.T) + c)
    # Linear on a 3-D input: MatMul then Add(bias, MatMul) (the bias fusion)
    x, w, bias = det([2, 20, 24], 17), det([24, 40], 18), det([40], 19)
    save(out, "mm_bias", [helper.make_node(MM, ["x", "w"], ["t"]),
                          helper.make_node("Add", ["bias", "t"], ["y"])],
         [("x", x)], [("w", w), ("bias", bias)], mm(x, w) + bias)
    # the other order, a [1, 1, N] bias, and an activation B
    x, w, bias = det([2, 20, 24], 20), det([24, 40], 21), det([1, 1, 40], 22)
    save(out, "mm_bias_act", [helper.make_node(MM, ["x", "w"], ["t"]),
                              helper.make_node("Add", ["t", "bias"], ["y"])],
         [("x", x), ("w", w)], [("bias", bias)], mm(x, w) + bias)


if __name__ == "__main__":
    main()
