#!/usr/bin/env python3
"""Models and references for the model-level cases of tests/check_pool.c:
dilated MaxPool (2-D with ceil_mode, 1-D) and BatchNormalization whose
scale, bias, mean and var are graph inputs (big enough to tile over the
cores), or partly constants (a 1-D BatchNorm1d input), with a Relu to fuse.
Each model NAME.onnx comes with NAME/input_N.pb (the graph's inputs in
order) and NAME/output_0.pb (the reference: PyTorch in fp32 on
fp16-representable data).
usage: pool_bn_models.py OUTDIR"""
import sys

import numpy as np
import torch
from onnx import helper

from onnx_case import save_case

out = sys.argv[1]
rng = np.random.default_rng(11)


def data(*shape, lo=None, hi=None):
    if lo is None:
        v = rng.standard_normal(shape)
    else:
        v = rng.uniform(lo, hi, shape)
    return v.astype(np.float16).astype(np.float32)


def save(name, nodes, ins, y, inits=(), opset=13):
    save_case(out, name, nodes, ins, y, inits, opset)


def bn_ref(x, s, b, m, v, eps):
    sh = (1, -1) + (1,) * (x.ndim - 2)
    t = lambda a: torch.from_numpy(a).reshape(sh)
    return ((torch.from_numpy(x) - t(m)) / torch.sqrt(t(v) + eps) * t(s) + t(b)).numpy()


# dilated max pooling, against torch
def maxpool(name, x, k, s, p, d, ceil):
    attrs = dict(kernel_shape=list(k), strides=list(s), pads=list(p) * 2, dilations=list(d))
    if ceil:
        attrs["ceil_mode"] = 1
    f = torch.nn.functional.max_pool2d if x.ndim == 4 else torch.nn.functional.max_pool1d
    y = f(torch.from_numpy(x), k, s, p, d, ceil_mode=bool(ceil)).numpy()
    save(name, [helper.make_node("MaxPool", ["x"], ["y"], **attrs)], [("x", x)], y)


maxpool("maxpool_dil_ceil", data(2, 40, 57, 61), (5, 3), (2, 2), (2, 1), (2, 3), 1)
maxpool("maxpool1d_dil", data(2, 24, 300), (5,), (3,), (2,), (4,), 0)
# rows too long for the UB: the edge casts in pieces (unaligned host rows),
# the pooling in strip mode
maxpool("maxpool1d_long", data(2, 3, 33333), (7,), (2,), (3,), (5,), 0)

# BatchNormalization with every parameter an input, then a Relu (fused)
C = 100
x = data(4, C, 48, 48)
s, b, m = data(C), data(C), data(C)
v = data(C, lo=0.25, hi=2.0)
eps = 1e-3
y = np.maximum(bn_ref(x, s, b, m, v, eps), 0)
save("bn_inputs_relu",
     [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["t"], epsilon=eps),
      helper.make_node("Relu", ["t"], ["y"])],
     [("x", x), ("s", s), ("b", b), ("m", m), ("v", v)], y)

# 1-D input, the scale and bias constants, mean and var inputs, C not a
# multiple of 16 (the table's padding lanes)
C = 37
x = data(3, C, 50)
s, b, m = data(C), data(C), data(C)
v = data(C, lo=0.25, hi=2.0)
y = bn_ref(x, s, b, m, v, 1e-5)
save("bn1d_mixed",
     [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
     [("x", x), ("m", m), ("v", v)], y, inits=[("s", s), ("b", b)])
