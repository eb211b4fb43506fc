#!/usr/bin/python3
"""A small conv model with a symbolic batch for the dynamic-batch tests
(tests/check_dynbatch.c): Conv 3x3 (4 -> 16 channels, 8x8), Relu, Conv 1x1
(16 -> 8).  Writes DIR/conv.onnx, and DIR/convhw.onnx: the same with batch 1
and a symbolic height and width (the dynamic-dims tests)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else "."
rng = np.random.default_rng(0)
w1 = numpy_helper.from_array(rng.standard_normal((16, 4, 3, 3)).astype(np.float32) * 0.3, "w1")
b1 = numpy_helper.from_array(rng.standard_normal(16).astype(np.float32) * 0.1, "b1")
w2 = numpy_helper.from_array(rng.standard_normal((8, 16, 1, 1)).astype(np.float32) * 0.3, "w2")
nodes = [
    helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("Conv", ["r1", "w2"], ["output"], name="conv2"),
]
g = helper.make_graph(nodes, "dynconv",
                      [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 4, 8, 8])],
                      [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", 8, 8, 8])],
                      [w1, b1, w2])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, out + "/conv.onnx")
g = helper.make_graph(nodes, "dynconvhw",
                      [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 4, "H", "W"])],
                      [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 8, "H", "W"])],
                      [w1, b1, w2])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, out + "/convhw.onnx")
