#!/usr/bin/env python3
"""Models for tests/simcmp.sh, written with onnx.helper.

usage: simcmp_models.py DIR

overflow.onnx: Conv -> Relu -> Mul(1e3) -> Mul(1e3) -> Div(1e6) -> Conv.  The
element-wise chain's middle value (about 1e6) is past fp16's largest (65504):
computed in fp16 it overflows, in fp32 (--keep_dtype) it does not, and the
Div brings it back into range, so only that chain diverges.

attention.onnx: Softmax(MatMul(Div(x, 8), K)) . V, torch's form: the compiler
moves the scale into the Softmax kernel, so the MatMul's output in memory is
not the model's scores and must not be compared as if it were.  Then
ReduceL2, which the compiler writes as Sqrt(ReduceSum(x * x)) with a tensor
of its own between them (not the model's: ONNX Runtime has no such tensor).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(7)


def const(name, a):
    return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)


inits = [
    const("w1", rng.uniform(-0.3, 0.3, (8, 4, 3, 3))),
    const("b1", rng.uniform(-0.1, 0.1, (8,))),
    const("k1", 1e3), const("k2", 1e3), const("k3", 1e6),
    const("w2", rng.uniform(-0.3, 0.3, (4, 8, 3, 3))),
]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], "conv1", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"], "relu1"),
    helper.make_node("Mul", ["r1", "k1"], ["m1"], "scale_up1"),
    helper.make_node("Mul", ["m1", "k2"], ["m2"], "scale_up2"),
    helper.make_node("Div", ["m2", "k3"], ["d1"], "scale_down"),
    helper.make_node("Conv", ["d1", "w2"], ["y"], "conv2", pads=[1, 1, 1, 1]),
]
g = helper.make_graph(nodes, "overflow",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
                      inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
onnx.save(m, os.path.join(d, "overflow.onnx"))

kt = const("kt", rng.uniform(-1, 1, (1, 8, 16)))
v = const("v", rng.uniform(-1, 1, (1, 16, 8)))
nodes = [
    helper.make_node("Div", ["x", "k8"], ["q"], "scale_q"),
    helper.make_node("MatMul", ["q", "kt"], ["s"], "scores"),
    helper.make_node("Softmax", ["s"], ["p"], "probs", axis=-1),
    helper.make_node("MatMul", ["p", "v"], ["ctx"], "context"),
    helper.make_node("ReduceL2", ["ctx"], ["nrm"], "l2", axes=[2], keepdims=1),
    helper.make_node("Div", ["ctx", "nrm"], ["y"], "normalize"),
]
g = helper.make_graph(nodes, "attention",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8])],
                      [kt, v, const("k8", 8.0)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
onnx.save(m, os.path.join(d, "attention.onnx"))
