#!/usr/bin/python3
"""Write a small image classifier and an image for tests/acl_example.sh into argv[1]:

    model.onnx   conv-bn-relu-pool x2, conv-bn-relu, global average pool, fc: 100 classes
    input.bin    a synthetic 64x64 RGB picture (sky, ground, a red disc), normalized
                 with the ImageNet mean and std, as raw little-endian float32 1x3x64x64
    input_0.pb, output_0.pb   the same input and PyTorch's logits as TensorProtos
    expected.txt PyTorch's top-5: one "index probability" line each

Random weights (BatchNorm statistics too, so folding it is not trivially exact).  The
device computes in fp16, so the seed is the first whose top-6 logits are apart by a
margin fp16 rounding cannot bridge; then the top-5 must match exactly.
Deterministic: fixed seeds, no downloads, no torchvision.
"""
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch

CLASSES = 100
SIZE = 64
MARGIN = 0.05  # of the logits' standard deviation, between each of the top 6


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()

        def block(cin, cout):
            return [torch.nn.Conv2d(cin, cout, 3, padding=1), torch.nn.BatchNorm2d(cout),
                    torch.nn.ReLU()]

        self.features = torch.nn.Sequential(
            *block(3, 16), torch.nn.MaxPool2d(2),
            *block(16, 32), torch.nn.MaxPool2d(2),
            *block(32, 64), torch.nn.AdaptiveAvgPool2d(1))
        self.fc = torch.nn.Linear(64, CLASSES)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def build(seed):
    torch.manual_seed(seed)
    net = Net()
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    return net.eval()


def picture():
    """Sky over ground with a red sun: smooth regions and edges, like a photo."""
    y, x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) / (SIZE - 1)
    sky = y < 0.6
    r = np.where(sky, 0.35 + 0.3 * y, 0.25 + 0.2 * x)
    g = np.where(sky, 0.55 + 0.3 * y, 0.45 - 0.2 * y)
    b = np.where(sky, 0.95 - 0.2 * y, 0.15 + 0.1 * x)
    sun = (x - 0.7) ** 2 + (y - 0.3) ** 2 < 0.12 ** 2
    r, g, b = np.where(sun, 0.95, r), np.where(sun, 0.25, g), np.where(sun, 0.1, b)
    img = np.stack([r, g, b])
    mean = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
    std = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]
    return ((img - mean) / std).astype(np.float32)[None]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    x = torch.from_numpy(picture())
    for seed in range(100):
        net = build(seed)
        with torch.no_grad():
            y = net(x)
        top = torch.sort(y[0], descending=True).values[:6]
        if float((top[:-1] - top[1:]).min()) >= MARGIN * float(y.std()):
            break
    else:
        sys.exit("no seed gives well separated top-6 logits")
    torch.onnx.export(net, x, os.path.join(out, "model.onnx"), opset_version=13,
                      input_names=["image"], output_names=["logits"], do_constant_folding=True)
    onnx.checker.check_model(onnx.load(os.path.join(out, "model.onnx")))
    x.numpy().astype("<f4").tofile(os.path.join(out, "input.bin"))
    for name, t in (("input_0.pb", x), ("output_0.pb", y)):
        tp = onnx.numpy_helper.from_array(t.numpy(), "image" if name == "input_0.pb" else "logits")
        with open(os.path.join(out, name), "wb") as f:
            f.write(tp.SerializeToString())
    p = torch.softmax(y[0], 0)
    with open(os.path.join(out, "expected.txt"), "w") as f:
        for i in torch.argsort(y[0], descending=True)[:5].tolist():
            f.write(f"{i} {float(p[i]):.6f}\n")
    print(f"seed {seed}: top-5 {[int(i) for i in torch.argsort(y[0], descending=True)[:5]]}")


if __name__ == "__main__":
    main()
