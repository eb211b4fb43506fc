#!/usr/bin/env python3
"""Models and checks for tests/check_quant.c (simquant).

usage: quant_models.py OUT
         OUT/cnn/model.onnx: a small CNN (Conv+BN+Relu, a residual Add, a
         depthwise conv, a 1x1 conv, Gemm), random weights and BN statistics;
         OUT/cnn/calib/test_data_set_{0..3}/input_0.pb: calibration inputs;
         OUT/cnn/eval/input_0.pb: an evaluation input (another seed);
         OUT/cnn/model_opset11.onnx: the same network at opset 11.
       quant_models.py --check QDQ.onnx FP32.onnx
         onnx.checker on QDQ.onnx; every int8 weight dequantized must be
         within half a quantization step of the fp32 weight, per channel;
         prints the counts as "key=value" lines; exit 1 on a failure.
"""
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper as nh


def build():
    import torch

    class Cnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            nn = torch.nn
            self.c1 = nn.Conv2d(3, 16, 3, padding=1)
            self.b1 = nn.BatchNorm2d(16)
            self.c2 = nn.Conv2d(16, 16, 3, padding=1)
            self.b2 = nn.BatchNorm2d(16)
            self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
            self.b3 = nn.BatchNorm2d(16)
            self.pw = nn.Conv2d(16, 32, 1)
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            r = torch.relu(self.b1(self.c1(x)))
            y = torch.relu(self.b2(self.c2(r)) + r)
            y = torch.relu(self.b3(self.dw(y)))
            y = torch.relu(self.pw(y))
            y = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1)
            return self.fc(y)

    torch.manual_seed(0)
    m = Cnn()
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.2, 0.2)
                mod.running_var.uniform_(0.5, 1.5)
                # per-channel scales spread over two decades, as trained
                # networks' folded BatchNorms make them: per-channel weight
                # quantization has something to win
                mod.weight.copy_(torch.exp(torch.empty(mod.weight.shape).uniform_(-3.5, 0.7)))
                mod.bias.uniform_(-0.2, 0.2)
    m.eval()
    return m


def save(path, name, arr):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(nh.from_array(arr, name).SerializeToString())


def export(out):
    import torch
    d = os.path.join(out, "cnn")
    os.makedirs(d, exist_ok=True)
    m = build()
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    torch.onnx.export(m, x, os.path.join(d, "model.onnx"), opset_version=13,
                      input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    # the same network at opset 11: simquant must raise it to 13
    torch.onnx.export(m, x, os.path.join(d, "model_opset11.onnx"), opset_version=11,
                      input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    rng = np.random.default_rng(5)
    for k in range(4):
        save(os.path.join(d, "calib", f"test_data_set_{k}", "input_0.pb"), "input",
             rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
    save(os.path.join(d, "eval", "input_0.pb"), "input",
         np.random.default_rng(99).standard_normal((1, 3, 32, 32)).astype(np.float32))
    print(d)


def check(qdq_path, fp32_path):
    q = onnx.load(qdq_path)
    onnx.checker.check_model(q)
    f = onnx.load(fp32_path)
    fw = {t.name: nh.to_array(t) for t in f.graph.initializer}
    qi = {t.name: nh.to_array(t) for t in q.graph.initializer}
    ops = [n.op_type for n in q.graph.node]
    bad = 0
    nweights = nbias = 0
    for n in q.graph.node:
        if n.op_type != "DequantizeLinear" or n.input[0] not in qi:
            continue
        v, s, z = (qi[n.input[0]], qi[n.input[1]], qi[n.input[2]])
        orig = n.input[0][: -len("_quantized")]
        if orig not in fw:
            print(f"{n.input[0]}: no fp32 initializer {orig}", file=sys.stderr)
            bad += 1
            continue
        w = fw[orig].astype(np.float64)
        axis = ([a.i for a in n.attribute if a.name == "axis"] or [1])[0]
        if s.ndim == 1:
            shape = [1] * v.ndim
            shape[axis] = -1
            s, z = s.reshape(shape), z.reshape(shape)
        if np.any(z != 0):
            print(f"{n.input[0]}: nonzero zero point", file=sys.stderr)
            bad += 1
        deq = (v.astype(np.float64) - z) * s
        if v.dtype == np.int8:
            nweights += 1
            tol = s / 2 * (1 + 1e-5)
        else:
            nbias += 1  # int32 bias: its step is s_x * s_w
            tol = s / 2 * (1 + 1e-5) + 1e-12
        err = np.abs(deq - w)
        if np.any(err > np.broadcast_to(tol, err.shape)):
            print(f"{n.input[0]}: error {err.max()} above half a step", file=sys.stderr)
            bad += 1
    opset = [o.version for o in q.opset_import if o.domain in ("", "ai.onnx")][0]
    print(f"quantize={ops.count('QuantizeLinear')}")
    print(f"dequantize={ops.count('DequantizeLinear')}")
    print(f"int8_weights={nweights}")
    print(f"int32_biases={nbias}")
    print(f"opset={opset}")
    print(f"fp32_initializers={sum(1 for t in q.graph.initializer if t.data_type == 1 and t.name in fw)}")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    export(sys.argv[1])
