#!/usr/bin/env python3
"""Models and reference data for tests/check_conv3d.c: the 3-D (rank-5)
Conv, ConvTranspose, MaxPool, AveragePool and BatchNormalization at sizes the ONNX node
tests do not reach (16 -> 32 channels over 8x16x16, several blocks of
channels and cores; strides, pads, dilations and groups per axis; a fused
ReLU; ceil_mode and count_include_pad both ways; rows of over 1000 output
pixels; non-trivial running statistics).  Exported by torch.onnx; the
reference is torch's own output.  Each model NAME.onnx comes with
NAME/input_0.pb and NAME/output_0.pb.
usage: conv3d_models.py OUTDIR"""
import os
import sys

import torch
from onnx import helper

from onnx_case import save_case, write_set

out = sys.argv[1]
torch.manual_seed(3)


def fp16(t):
    # fp16-representable values, so that the reference sees what the device does
    return t.half().float()


def save(name, model, shape):
    model.eval()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(fp16(p))
        x = fp16(torch.randn(*shape))
        y = model(x)
    path = os.path.join(out, name + ".onnx")
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                      opset_version=13)
    write_set(out, name, [("x", x.numpy())], y.numpy())


def save_pool(name, shape, k, s, p, ceil):
    """AveragePool with count_include_pad=1 and pads, built by hand: torch
    exports that as Pad + AveragePool; the reference is torch's AvgPool3d
    (count_include_pad=True), which divides as ONNX's reference does."""
    x = fp16(torch.randn(*shape))
    with torch.no_grad():
        y = torch.nn.AvgPool3d(k, stride=s, padding=p, ceil_mode=ceil,
                               count_include_pad=True)(x)
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=list(k),
                            strides=list(s), pads=list(p) * 2,
                            ceil_mode=int(ceil), count_include_pad=1)
    save_case(out, name, [node], [("x", x.numpy())], y.numpy())


nn = torch.nn

# Conv3d: 16 -> 32 channels, per-axis stride/pad/dilation, bias, fused ReLU
save("conv3d_relu", nn.Sequential(
    nn.Conv3d(16, 32, 3, stride=(2, 1, 2), padding=(1, 2, 1), dilation=(1, 2, 1)),
    nn.ReLU()), (2, 16, 8, 16, 16))
# groups of 4 channels (not whole 16-channel blocks), D padding both ends
save("conv3d_groups", nn.Conv3d(16, 32, 3, padding=1, groups=4), (1, 16, 8, 16, 16))
# odd sizes: 5 -> 7 channels, W of 20 (two lane blocks), depth stride 3,
# depth dilation 2, no bias
save("conv3d_odd", nn.Conv3d(5, 7, (2, 3, 1), stride=(3, 1, 1), padding=(2, 1, 0),
                             dilation=(2, 1, 1), bias=False), (1, 5, 9, 9, 20))
# ConvTranspose3d: strides, pads and output_padding per axis, bias, ReLU;
# groups and a depth dilation
save("convt3d_s2_relu", nn.Sequential(
    nn.ConvTranspose3d(16, 24, 3, stride=2, padding=1, output_padding=(1, 0, 1)),
    nn.ReLU()), (1, 16, 5, 8, 8))
save("convt3d_groups_dil", nn.ConvTranspose3d(8, 12, (2, 3, 3), stride=(1, 2, 1),
                                              padding=(0, 1, 1), dilation=(2, 1, 1),
                                              groups=4), (2, 8, 4, 6, 7))
# MaxPool3d / AvgPool3d with ceil_mode, count_include_pad both ways
save("maxpool3d_ceil", nn.MaxPool3d(3, stride=2, padding=1, ceil_mode=True),
     (2, 16, 9, 17, 17))
save("avgpool3d_ceil_incl", nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True,
                                         count_include_pad=True), (2, 16, 9, 17, 17))
save("avgpool3d_ceil_excl", nn.AvgPool3d((2, 3, 3), stride=(2, 2, 1), padding=(1, 1, 1),
                                         ceil_mode=True, count_include_pad=False),
     (1, 20, 7, 12, 10))
save_pool("avgpool3d_pads_incl", (1, 16, 7, 11, 13), (3, 2, 3), (1, 2, 2), (1, 1, 1), False)
save_pool("avgpool3d_pads_incl_ceil", (2, 16, 9, 17, 17), (3, 3, 3), (2, 2, 2), (1, 1, 1),
          True)
# a pooled row of 39*39 = 1521 pixels: the depth pass keeps its rows short
save("avgpool3d_wide", nn.AvgPool3d(2, stride=1), (1, 4, 6, 40, 40))
# BatchNorm3d (eval) with non-trivial running statistics, then a ReLU
bn = nn.BatchNorm3d(16)
with torch.no_grad():
    bn.running_mean.copy_(torch.randn(16))
    bn.running_var.copy_(torch.rand(16) * 2 + 0.2)
    bn.weight.copy_(torch.randn(16))
    bn.bias.copy_(torch.randn(16))
save("bn3d_relu", nn.Sequential(bn, nn.ReLU()), (2, 16, 8, 16, 16))
