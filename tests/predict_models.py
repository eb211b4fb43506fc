#!/usr/bin/env python3
"""One-operator graphs for tests/check_predict.c, one or more per kernel
generator: conv (cube 3x3, 1x1 strided, depthwise, transposed), MatMul (a
constant B; a batch of activations), pooling (max, global average), an
element-wise chain, Softmax, LayerNorm, ReduceMean, Pad, Transpose, Resize;
TransData comes with every one.  Random weights: only cycles are checked.
usage: predict_models.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(0)

    def w(*shape):
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    def save(name, nodes, ins, inits, y):
        vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in ins]
        yo = helper.make_tensor_value_info("y", TensorProto.FLOAT, y)
        g = helper.make_graph(nodes, name, vi, [yo],
                              [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(out, name + ".onnx"))

    node = helper.make_node
    save("conv3x3", [node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
         [("x", [1, 64, 28, 28])], [("w", w(64, 64, 3, 3))], [1, 64, 28, 28])
    save("conv1x1s2", [node("Conv", ["x", "w"], ["y"], strides=[2, 2])],
         [("x", [1, 256, 28, 28])], [("w", w(128, 256, 1, 1))], [1, 128, 14, 14])
    save("dwconv", [node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], group=96)],
         [("x", [1, 96, 28, 28])], [("w", w(96, 1, 3, 3))], [1, 96, 28, 28])
    save("convt", [node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2])],
         [("x", [1, 32, 14, 14])], [("w", w(32, 16, 2, 2))], [1, 16, 28, 28])
    save("matmul", [node("MatMul", ["x", "w"], ["y"])],
         [("x", [128, 768])], [("w", w(768, 768))], [128, 768])
    save("bmm", [node("MatMul", ["a", "b"], ["y"])],
         [("a", [12, 128, 64]), ("b", [12, 64, 128])], [], [12, 128, 128])
    save("maxpool", [node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                          pads=[1, 1, 1, 1])],
         [("x", [1, 64, 112, 112])], [], [1, 64, 56, 56])
    save("gap", [node("GlobalAveragePool", ["x"], ["y"])],
         [("x", [1, 512, 7, 7])], [], [1, 512, 1, 1])
    save("addrelu", [node("Add", ["a", "b"], ["s"]), node("Relu", ["s"], ["y"])],
         [("a", [1, 64, 56, 56]), ("b", [1, 64, 56, 56])], [], [1, 64, 56, 56])
    save("softmax", [node("Softmax", ["x"], ["y"], axis=-1)],
         [("x", [12, 128, 128])], [], [12, 128, 128])
    save("layernorm", [node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)],
         [("x", [1, 128, 768])], [("g", 1 + w(768)), ("b", w(768))], [1, 128, 768])
    save("reducemean", [node("ReduceMean", ["x"], ["y"], axes=[-1], keepdims=1)],
         [("x", [1, 128, 768])], [], [1, 128, 1])
    save("pad", [node("Pad", ["x", "p"], ["y"])],
         [("x", [1, 32, 28, 28])], [("p", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))],
         [1, 32, 30, 30])
    save("transpose", [node("Transpose", ["x"], ["y"], perm=[0, 2, 1, 3])],
         [("x", [1, 128, 12, 64])], [], [1, 12, 128, 64])
    save("resize", [node("Resize", ["x", "", "s"], ["y"], mode="nearest")],
         [("x", [1, 64, 28, 28])], [("s", np.array([1, 1, 2, 2], np.float32))],
         [1, 64, 56, 56])


if __name__ == "__main__":
    main()
