#!/usr/bin/env python3
"""Models for tests/check_aipp.c: a small seeded conv net (conv, relu, strided
conv) on an image input, exported with torch at test time:
  net3.onnx   [1, 3, 16, 24]   (RGB, YUV420SP, XRGB8888 through AIPP)
  net3b2.onnx [2, 3, 16, 24]   (a batch of two images)
  net1.onnx   [1, 1, 16, 24]   (YUV400)
  net3_224.onnx [1, 3, 224, 224] (the size of ResNet-50's input)
usage: aipp_models.py OUTDIR"""
import os
import sys

import torch


class Net(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = torch.nn.Conv2d(c, 16, 3, padding=1)
        self.b = torch.nn.Conv2d(16, 8, 3, stride=2, padding=1)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def export(out, name, c, n, h, w):
    torch.manual_seed(7)
    m = Net(c).eval()
    x = torch.zeros(n, c, h, w)
    torch.onnx.export(m, x, os.path.join(out, name + ".onnx"), input_names=["image"],
                      output_names=["y"], opset_version=13)


def main():
    out = sys.argv[1]
    export(out, "net3", 3, 1, 16, 24)
    export(out, "net3b2", 3, 2, 16, 24)
    export(out, "net1", 1, 1, 16, 24)
    export(out, "net3_224", 3, 1, 224, 224)


if __name__ == "__main__":
    main()
