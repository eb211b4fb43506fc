#!/usr/bin/env python3
"""ONNX models built to have a known bottleneck, for tests/advisor.sh.
usage: advisor_models.py OUTDIR

  gemm     one 4096x1024x4096 MatMul: the cube (cube-bound)
  eltwise  eight element-wise ops on 16 Mi elements, to be compiled with
           fusion off: each op streams 64 MB through HBM (memory-bound)
  tiny     300 element-wise ops on a 16x16 tensor, fusion off: each task is
           shorter than the task scheduler's gap (launch-bound)"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(out, name, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, os.path.join(out, name + ".onnx"))


def chain(out, name, shape, n):
    """n unary element-wise ops in a row; every intermediate is used once."""
    ops = ["Relu", "Abs", "Neg", "Abs"]
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, shape)
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, shape)
    nodes, prev = [], "a"
    for i in range(n):
        op = ops[i % len(ops)]
        nxt = "z" if i == n - 1 else f"t{i}"
        nodes.append(helper.make_node(op, [prev], [nxt], name=f"{op.lower()}{i}"))
        prev = nxt
    save(out, name, nodes, [a], [z], [])


def main():
    out = sys.argv[1]
    # 4096x1024x4096: wide enough that the MatMul kernel's tiles reuse A and
    # B enough to keep the L2 below the cube (a square 2048^3 one streams
    # through the L2 at 89% while its cube works 87%: memory-bound)
    m, k, n = 4096, 1024, 4096
    rng = np.random.default_rng(11)
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [m, n])
    w = numpy_helper.from_array(
        (rng.standard_normal((k, n), dtype=np.float32) * 0.02).astype(np.float32), "w")
    save(out, "gemm", [helper.make_node("MatMul", ["a", "w"], ["z"], name="matmul")],
         [a], [z], [w])
    chain(out, "eltwise", [16, 1024, 1024], 8)
    chain(out, "tiny", [16, 16], 300)


if __name__ == "__main__":
    main()
