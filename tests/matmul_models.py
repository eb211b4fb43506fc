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
    # Gemm's C broadcast: a column [M, 1] as an input (beta 0.5), a constant
    # column when M = N (not a row vector), one value as an input
    a, b, c = det([20, 24], 31), det([24, 20], 32), det([20, 1], 33)
    save(out, "gemm_col_c", [helper.make_node("Gemm", ["a", "b", "c"], ["y"], beta=0.5)],
         [("a", a), ("b", b), ("c", c)], [], mm(a, b) + 0.5 * c)
    save(out, "gemm_col_c_const", [helper.make_node("Gemm", ["a", "b", "c"], ["y"])],
         [("a", a)], [("b", b), ("c", c)], mm(a, b) + c)
    b2, c1 = det([18, 24], 35), det([1], 34)
    save(out, "gemm_one_c", [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)],
         [("a", a), ("b", b2), ("c", c1)], [], mm(a, b2.T) + c1)
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
    # element-wise epilogues (MatMulEltwiseFusionPass): torch's erf GELU after
    # a Linear (the bias and Gelu fusions make it MatMul+bias, Gelu)
    gelu_nodes = [helper.make_node(MM, ["x", "w"], ["t"]),
                  helper.make_node("Add", ["t", "bias"], ["h"]),
                  helper.make_node("Div", ["h", "sq2"], ["d"]),
                  helper.make_node("Erf", ["d"], ["e"]),
                  helper.make_node("Add", ["e", "one"], ["e1"]),
                  helper.make_node("Mul", ["h", "e1"], ["g"]),
                  helper.make_node("Mul", ["g", "half"], ["y"])]
    consts = [("sq2", np.array(1.4142135381698608, np.float32)),
              ("one", np.array(1.0, np.float32)), ("half", np.array(0.5, np.float32))]

    def gelu(h):
        from math import erf
        return 0.5 * h * (1 + np.vectorize(erf)(h / np.sqrt(2)))

    x, w, bias = det([2, 20, 24], 23), det([24, 40], 24), det([40], 25)
    save(out, "mm_gelu", gelu_nodes, [("x", x)], [("w", w), ("bias", bias)] + consts,
         gelu(mm(x, w) + bias))
    # many tiles, a partial last row tile, groups narrower than four pieces
    # (the chain's buffers fill the UB)
    x, w, bias = det([2, 150, 64], 26) / 4, det([64, 520], 27), det([520], 28)
    save(out, "mm_gelu_big", gelu_nodes, [("x", x)], [("w", w), ("bias", bias)] + consts,
         gelu(mm(x, w) + bias))
    # Gemm (transposed constant B) and a Relu
    a, b, c = det([30, 24], 29), det([36, 24], 30), det([36], 31)
    save(out, "gemm_relu", [helper.make_node("Gemm", ["a", "b", "c"], ["t"], transB=1),
                            helper.make_node("Relu", ["t"], ["y"])],
         [("a", a)], [("b", b), ("c", c)], np.maximum(mm(a, b.T) + c, 0))
    # a chain the element-wise fusion makes: Sigmoid then a scale, no bias
    x, w = det([20, 24], 32), det([24, 40], 33) / 8
    save(out, "mm_sig_scale", [helper.make_node(MM, ["x", "w"], ["t"]),
                               helper.make_node("Sigmoid", ["t"], ["s"]),
                               helper.make_node("Mul", ["s", "three"], ["y"])],
         [("x", x)], [("w", w), ("three", np.array(3.0, np.float32))],
         3 / (1 + np.exp(-mm(x, w))))
    # Clip (ReLU6) with constant bounds, an activation B
    x, w = det([2, 20, 24], 34), det([24, 40], 35)
    save(out, "mm_clip", [helper.make_node(MM, ["x", "w"], ["t"]),
                          helper.make_node("Clip", ["t", "lo", "hi"], ["y"])],
         [("x", x), ("w", w)], [("lo", np.array(0, np.float32)),
                                ("hi", np.array(6, np.float32))],
         np.clip(mm(x, w), 0, 6))
    # the product read twice: no epilogue (it must reach memory)
    x, w = det([20, 24], 36), det([24, 40], 37)
    save(out, "mm_two_readers", [helper.make_node(MM, ["x", "w"], ["t"]),
                                 helper.make_node("Tanh", ["t"], ["u"]),
                                 helper.make_node("Add", ["t", "u"], ["y"])],
         [("x", x)], [("w", w)], mm(x, w) + np.tanh(mm(x, w)))


if __name__ == "__main__":
    main()
