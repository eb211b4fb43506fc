#!/usr/bin/env python3
"""Models for tests/check_precision.c (--precision_mode, --keep_dtype), each
NAME.onnx with NAME/input_N.pb and NAME/output_N.pb (float64 numpy results
rounded to float32).  The inputs are fp16 values, so that the device's
conversion of them is exact and the errors measured are the kernels' own.

  mixchain  y = Log(Exp(x)) over small x: in fp16 exp(x) ~ 1 rounds to a step
            of 2^-10 and the log keeps that error (~5e-4); in fp32 y is x to
            fp16's rounding of x itself.  One fused element-wise chain.
  mixnet    three independent paths: a ReduceSum over 2048 rows (a large
            reduction), Softmax over rows of 300 after a Relu named keep_me,
            and a MatMul (the cube, fp16 in every mode).

usage: precision_models.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as P, helper as h, numpy_helper as nh

out = sys.argv[1] if len(sys.argv) > 1 else "precision_testdata"
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(3)


def save(name, nodes, ins, outs, inits, inputs, outputs):
    g = h.make_graph(nodes, name, ins, outs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    for k, a in enumerate(inputs):
        onnx.save_tensor(nh.from_array(a.astype(np.float32)), os.path.join(d, "input_%d.pb" % k))
    for k, a in enumerate(outputs):
        onnx.save_tensor(nh.from_array(a.astype(np.float32)), os.path.join(d, "output_%d.pb" % k))


def f16(a):
    """Values fp16 holds exactly."""
    return a.astype(np.float16).astype(np.float32)


def vi(name, shape):
    return h.make_tensor_value_info(name, P.FLOAT, shape)


x = f16(rng.uniform(-0.05, 0.05, (64, 1000)))
save("mixchain",
     [h.make_node("Exp", ["x"], ["e"], name="exp"), h.make_node("Log", ["e"], ["y"], name="log")],
     [vi("x", [64, 1000])], [vi("y", [64, 1000])], [], [x], [x.astype(np.float64)])

a = f16(rng.uniform(0, 1, (2048, 16)))
b = f16(rng.uniform(-6, 6, (8, 300)))
c = f16(rng.standard_normal((16, 64)))
w = f16(rng.standard_normal((64, 48)) / 8)
rb = np.maximum(b.astype(np.float64), 0)
e = np.exp(rb - rb.max(-1, keepdims=True))
save("mixnet",
     [h.make_node("ReduceSum", ["a", "axes"], ["s"], name="big_sum", keepdims=1),
      h.make_node("Relu", ["b"], ["r"], name="keep_me"),
      h.make_node("Softmax", ["r"], ["p"], name="softmax", axis=-1),
      h.make_node("MatMul", ["c", "w"], ["m"], name="matmul")],
     [vi("a", [2048, 16]), vi("b", [8, 300]), vi("c", [16, 64])],
     [vi("s", [1, 16]), vi("p", [8, 300]), vi("m", [16, 48])],
     [nh.from_array(np.array([0], np.int64), "axes"), nh.from_array(w, "w")],
     [a, b, c],
     [a.astype(np.float64).sum(0, keepdims=True), e / e.sum(-1, keepdims=True),
      c.astype(np.float64) @ w.astype(np.float64)])
