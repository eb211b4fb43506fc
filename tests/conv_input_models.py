#!/usr/bin/env python3
"""Models and reference data for tests/check_conv_inputs.c: Conv and
ConvTranspose whose weights are graph inputs (or computed by a node), which
the device lays out as FRACTAL_Z itself (compiler/lower_wlayout.c), at sizes
the ONNX node tests do not reach: several 16-channel blocks, channel counts
that are not multiples of 16, strides, pads, dilations, 1-D forms, a fused
bias and Relu, a 3-D conv, enough work for every core.  Each model NAME.onnx comes with
NAME/input_N.pb and NAME/output_0.pb (the reference: PyTorch on the same
fp16-representable values).
usage: conv_input_models.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper

from onnx_case import save_case

out = sys.argv[1]
rng = np.random.default_rng(11)


def data(*shape, scale=1.0):
    # fp16-representable, so that the reference sees what the device does
    return (rng.standard_normal(shape) * scale).astype(np.float16).astype(np.float32)


def save(name, nodes, inputs, y, inits=()):
    """inputs: (name, array) pairs, graph inputs in order"""
    save_case(out, name, nodes, inputs, y, inits)


def t(a):
    return torch.from_numpy(a).double()


def conv(name, x, w, b=None, relu=False, scale_w=None, **kw):
    """Conv (1-D or 2-D) with w a graph input; b a constant bias; scale_w:
    the weights are Mul(w, scale_w) (computed on the device)"""
    attrs = {k: v for k, v in kw.items()}
    ins = ["x", "wm" if scale_w is not None else "w"] + (["b"] if b is not None else [])
    nodes = []
    inits = []
    if scale_w is not None:
        nodes.append(helper.make_node("Mul", ["w", "s"], ["wm"]))
        inits.append(("s", np.array(scale_w, dtype=np.float32)))
    nodes.append(helper.make_node("Conv", ins, ["c" if relu else "y"], **attrs))
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    if b is not None:
        inits.append(("b", b))
    fn = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}[x.ndim]
    sp = x.ndim - 2
    pads = attrs.get("pads", [0] * 2 * sp)
    wr = w * scale_w if scale_w is not None else w
    xp = F.pad(t(x), [p for i in reversed(range(sp)) for p in (pads[i], pads[i + sp])])
    y = fn(xp, t(wr), t(b) if b is not None else None, stride=attrs.get("strides", 1),
           dilation=attrs.get("dilations", 1)).numpy()
    if relu:
        y = np.maximum(y, 0)
    save(name, nodes, [("x", x), ("w", w)], y, inits)


def convt(name, x, w, b=None, **kw):
    ins = ["x", "w"] + (["b"] if b is not None else [])
    nodes = [helper.make_node("ConvTranspose", ins, ["y"], **kw)]
    fn = {3: F.conv_transpose1d, 4: F.conv_transpose2d, 5: F.conv_transpose3d}[x.ndim]
    sp = x.ndim - 2
    pads = kw.get("pads", [0] * 2 * sp)
    assert pads[:sp] == pads[sp:]
    y = fn(t(x), t(w), t(b) if b is not None else None, stride=kw.get("strides", 1),
           padding=pads[:sp], output_padding=kw.get("output_padding", 0),
           dilation=kw.get("dilations", 1)).numpy()
    save(name, nodes, [("x", x), ("w", w)], y, [("b", b)] if b is not None else ())


conv("conv_s2_bias_relu", data(2, 20, 9, 11), data(37, 20, 3, 3, scale=0.25), b=data(37),
     relu=True, strides=[2, 2], pads=[1, 1, 1, 1])
conv("conv_1x1", data(1, 48, 7, 7), data(64, 48, 1, 1, scale=0.2))
conv("conv_3x3_big", data(1, 64, 28, 28), data(128, 64, 3, 3, scale=0.05), pads=[1, 1, 1, 1])
conv("conv_computed_w", data(1, 24, 10, 10), data(20, 24, 3, 3, scale=0.2), scale_w=0.5,
     pads=[0, 2, 1, 0], dilations=[2, 1])
conv("conv3d_s2", data(1, 5, 6, 7, 9), data(12, 5, 3, 3, 2, scale=0.2), b=data(12),
     strides=[2, 1, 2], pads=[1, 0, 1, 1, 1, 0])
conv("conv1d_dil", data(2, 19, 30), data(24, 19, 5, scale=0.2), dilations=[2], pads=[3, 3])
convt("convt_s2_op1", data(1, 21, 5, 6), data(21, 18, 3, 3, scale=0.25), b=data(18),
      strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])
convt("convt_40_33", data(2, 40, 4, 4), data(40, 33, 4, 4, scale=0.1), strides=[2, 2],
      pads=[1, 1, 1, 1])
convt("convt_32_dil", data(1, 32, 6, 5), data(32, 16, 3, 2, scale=0.1), dilations=[2, 1])
convt("convt3d_s2", data(1, 18, 3, 5, 4), data(18, 20, 2, 3, 3, scale=0.2), b=data(20),
      strides=[2, 1, 2], pads=[1, 1, 0, 1, 1, 0], output_padding=[1, 0, 1])
convt("convt1d_s3", data(1, 17, 9), data(17, 5, 3, scale=0.3), strides=[3])
# refused: a grouped conv with weights as an input
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], group=2)], "grouped",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 5, 5]),
                       helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 4, 3, 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3, 3])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.save(m, os.path.join(out, "conv_grouped_input_w.onnx"))
