#!/usr/bin/env python3
"""Small ONNX graphs for the pass unit tests (tests/check_passes.c).
usage: pass_models.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(out, name, nodes, inputs, outputs, inits, opset=13, shapes=False):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    if shapes:  # value infos, for passes that compare shapes, run alone
        m = onnx.shape_inference.infer_shapes(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(7)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    bn = [numpy_helper.from_array(v.astype(np.float32), n) for v, n in (
        (rng.uniform(0.5, 1.5, 4), "s"), (rng.uniform(-1, 1, 4), "B"),
        (rng.uniform(-1, 1, 4), "mean"), (rng.uniform(0.5, 1.5, 4), "var"))]
    # Conv -> BN -> Relu: everything folds into the Conv
    save(out, "conv_bn_relu", [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "B", "mean", "var"], ["n"],
                         name="bn", epsilon=1e-3),
        helper.make_node("Relu", ["n"], ["y"], name="relu")], [x], [y], [w, b] + bn)
    # Conv -> Clip(0, 6) via constant inputs; the Conv output is also used elsewhere
    lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
    hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
    y2 = helper.make_tensor_value_info("y2", TensorProto.FLOAT, None)
    save(out, "conv_clip_shared", [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
        helper.make_node("Clip", ["c", "lo", "hi"], ["y"], name="clip"),
        helper.make_node("Relu", ["c"], ["y2"], name="relu")], [x], [y, y2], [w, lo, hi])
    save(out, "conv_clip", [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
        helper.make_node("Clip", ["c", "lo", "hi"], ["y"], name="clip")], [x], [y],
        [w, lo, hi])
    # Identity chain, a zero Pad and a dead branch
    pads = numpy_helper.from_array(np.zeros(8, np.int64), "pads")
    save(out, "identity_dead", [
        helper.make_node("Identity", ["x"], ["i1"], name="id1"),
        helper.make_node("Pad", ["i1", "pads"], ["p"], name="pad", mode="constant"),
        helper.make_node("Relu", ["p"], ["y"], name="relu"),
        helper.make_node("Exp", ["x"], ["unused"], name="dead")], [x], [y], [pads])
    # a chain of element-wise ops on a 2-D tensor: each intermediate dies as
    # soon as the next op has read it, so the memory plan can reuse it
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [64, 64])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [64, 64])
    ops = ["Relu", "Exp", "Abs", "Sqrt", "Neg", "Abs"]
    nodes, prev = [], "a"
    for i, op in enumerate(ops):
        nxt = "z" if i == len(ops) - 1 else f"t{i}"
        nodes.append(helper.make_node(op, [prev], [nxt], name=f"{op.lower()}{i}"))
        prev = nxt
    save(out, "chain", nodes, [a], [z], [])
    # a residual Add of two activations, its Relu and a scale: one chain
    # kernel with two inputs
    r1 = helper.make_tensor_value_info("r1", TensorProto.FLOAT, [2, 20, 6, 6])
    r2 = helper.make_tensor_value_info("r2", TensorProto.FLOAT, [2, 20, 6, 6])
    rz = helper.make_tensor_value_info("rz", TensorProto.FLOAT, [2, 20, 6, 6])
    half = numpy_helper.from_array(np.array(0.5, np.float32), "half")
    save(out, "residual", [
        helper.make_node("Add", ["r1", "r2"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["r"], name="relu"),
        helper.make_node("Mul", ["r", "half"], ["rz"], name="scale")], [r1, r2], [rz], [half])
    # residual Adds after convs: conv2 + x then Relu (a basic block); two
    # convs of one input added then Clip (a downsampling shortcut: the later
    # conv, "down", takes the other's output); an Add after a Conv whose Relu
    # was fused before it, which must stay
    def wts(name, *shape):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * 0.3).astype(np.float32), name)
    rx = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 8, 8])
    ry = helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 24, 4, 4])
    six = numpy_helper.from_array(np.array(6, np.float32), "six")
    zero_f = numpy_helper.from_array(np.array(0, np.float32), "zero_f")
    save(out, "conv_residual", [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "x"], ["s1"], name="add1"),
        helper.make_node("Relu", ["s1"], ["y1"], name="relu2"),
        helper.make_node("Conv", ["y1", "w3"], ["c3"], name="conv3", strides=[2, 2]),
        helper.make_node("Conv", ["y1", "wd", "bd"], ["d"], name="down", strides=[2, 2]),
        helper.make_node("Add", ["c3", "d"], ["s2"], name="add2"),
        helper.make_node("Clip", ["s2", "zero_f", "six"], ["z"], name="clip"),
        helper.make_node("Conv", ["z", "w4"], ["c4"], name="conv4"),
        helper.make_node("Relu", ["c4"], ["r4"], name="relu4"),
        helper.make_node("Add", ["r4", "z"], ["out"], name="add3")], [rx], [ry],
        [wts("w1", 16, 16, 3, 3), wts("b1", 16), wts("w2", 16, 16, 3, 3), wts("b2", 16),
         wts("w3", 24, 16, 1, 1), wts("wd", 24, 16, 1, 1), wts("bd", 24),
         wts("w4", 24, 24, 1, 1), six, zero_f], shapes=True)
    # x.view(x.size(0), -1) as exporters write it: a shape subgraph to fold
    xv = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 4])
    yv = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
    axes = numpy_helper.from_array(np.array([0], np.int64), "axes")
    minus1 = numpy_helper.from_array(np.array([-1], np.int64), "minus1")
    save(out, "view_flatten", [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
        helper.make_node("Concat", ["n1", "minus1"], ["shp"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "shp"], ["r"], name="reshape"),
        helper.make_node("Relu", ["r"], ["y"], name="relu")], [xv], [yv],
        [zero, axes, minus1])


if __name__ == "__main__":
    main()
