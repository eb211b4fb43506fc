#!/usr/bin/python3
"""Extra node tests for ConvTranspose, grouped and 1-D convolution, in the
ONNX backend test layout, against torch (and the ONNX ConvTranspose node
tests with their weights frozen into initializers, which the stock harness
refuses as non-constant weights).  Run them through the node harness:

    /usr/bin/python3 tests/conv_models.py DIR
    ONNX_TESTDATA=DIR tests/check_nodes   # the node suite: all must PASS

(the harness's minimum counts and its test_atanh probe then fail: only the
PASS/REFUSED lines matter; test_convtranspose_3d_frozen is refused.)"""
import glob, os, shutil, sys

import onnx
import torch
from onnx import numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else "conv_testdata"
node = os.path.join(out, "node")
src = "/usr/share/libonnx-testdata/data/node/"
for t in sorted(glob.glob(src + "test_convtranspose*")):
    m = onnx.load(t + "/model.onnx")
    ds = t + "/test_data_set_0"
    ins = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(ds + "/input_*.pb"))]
    m.graph.initializer.append(numpy_helper.from_array(ins[1], m.graph.input[1].name))
    del m.graph.input[1]
    d = os.path.join(node, os.path.basename(t) + "_frozen")
    os.makedirs(d + "/test_data_set_0", exist_ok=True)
    onnx.save(m, d + "/model.onnx")
    with open(d + "/test_data_set_0/input_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(ins[0], m.graph.input[0].name).SerializeToString())
    shutil.copy(ds + "/output_0.pb", d + "/test_data_set_0/output_0.pb")

torch.manual_seed(0)
nn = torch.nn
cases = {
    "ct_s2_p1_op1_bias": (nn.ConvTranspose2d(8, 12, 3, stride=2, padding=1, output_padding=1), (2, 8, 5, 6)),
    "ct_k4_s2_p1_c40": (nn.ConvTranspose2d(40, 24, 4, stride=2, padding=1, bias=False), (1, 40, 7, 7)),
    "ct_dil2_s3": (nn.ConvTranspose2d(5, 7, (3, 2), stride=(3, 1), padding=(1, 0), dilation=2), (1, 5, 4, 5)),
    "ct_groups2": (nn.ConvTranspose2d(32, 32, 3, stride=2, padding=1, groups=2), (1, 32, 6, 6)),
    "ct_depthwise": (nn.ConvTranspose2d(16, 16, 3, stride=2, groups=16), (2, 16, 5, 5)),
    "ct_1d": (nn.ConvTranspose1d(6, 10, 5, stride=3, padding=2, output_padding=1), (2, 6, 9)),
    "conv_g4": (nn.Conv2d(64, 128, 3, padding=1, groups=4), (2, 64, 9, 9)),
    "conv_g32": (nn.Conv2d(128, 128, 3, stride=2, padding=1, groups=32), (1, 128, 10, 10)),
    "conv_g3_odd": (nn.Conv2d(12, 18, 3, padding=1, groups=3), (2, 12, 7, 7)),
    "conv1d_seq": (nn.Sequential(nn.Conv1d(4, 8, 3, padding=1), nn.BatchNorm1d(8).eval(), nn.ReLU(),
                                 nn.MaxPool1d(2), nn.Conv1d(8, 6, 3, groups=2)), (2, 4, 20)),
    # grouped convs run as one task over several slices of groups (each
    # slice's channels whole 16-channel blocks): ResNeXt's 32 groups of 4
    # (8 slices of 4 groups) with its BatchNorm and ReLU; 32 groups of 8
    # (16 slices of 2) at batch 2, strided; 16 groups of 32 channels (one
    # group a slice) without bias
    "conv_g32x4_bn_relu": (nn.Sequential(nn.Conv2d(128, 128, 3, padding=1, groups=32, bias=False),
                                         nn.BatchNorm2d(128).eval(), nn.ReLU()), (1, 128, 14, 14)),
    "conv_g32x8_s2": (nn.Conv2d(256, 256, 3, stride=2, padding=1, groups=32), (2, 256, 9, 9)),
    "conv_g16x32": (nn.Conv2d(512, 512, 3, padding=1, groups=16, bias=False), (1, 512, 7, 7)),
    # first convs of 1-4 channels take the small-channel (C04) path: the
    # ResNet stem (7x7 stride 2, BN, ReLU) at batch 2, a MobileNet-like 3x3
    # stride 2, one channel, four channels; an odd width falls back to C0 16
    "first_c3_7x7_s2_bn_relu": (nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
                                              nn.BatchNorm2d(64).eval(), nn.ReLU()), (2, 3, 32, 32)),
    "first_c3_3x3_s2": (nn.Conv2d(3, 32, 3, stride=2, padding=1), (1, 3, 28, 28)),
    "first_c1_3x3": (nn.Conv2d(1, 16, 3, padding=1), (1, 1, 20, 24)),
    "first_c4_3x3_s2": (nn.Conv2d(4, 32, 3, stride=2, padding=1), (2, 4, 16, 16)),
    "first_c3_7x7_s2_b1": (nn.Conv2d(3, 24, 7, stride=2, padding=3), (1, 3, 36, 40)),
    "first_c3_odd_width": (nn.Conv2d(3, 16, 3, padding=1), (1, 3, 15, 15)),
}
# BatchNorm's default statistics would fold trivially; a generator of its
# own leaves the other cases' inputs as they were
g = torch.Generator().manual_seed(1)
with torch.no_grad():
    bn = cases["conv_g32x4_bn_relu"][0][1]
    for t, lo, hi in ((bn.running_mean, -0.2, 0.2), (bn.running_var, 0.5, 1.5),
                      (bn.weight, 0.5, 1.5), (bn.bias, -0.2, 0.2)):
        t.uniform_(lo, hi, generator=g)
for name, (mod, shape) in cases.items():
    mod.eval()
    x = torch.randn(*shape)
    with torch.no_grad():
        y = mod(x)
    d = os.path.join(node, "test_" + name)
    os.makedirs(d + "/test_data_set_0", exist_ok=True)
    torch.onnx.export(mod, x, d + "/model.onnx", input_names=["x"], output_names=["y"], opset_version=13)
    with open(d + "/test_data_set_0/input_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(x.numpy(), "x").SerializeToString())
    with open(d + "/test_data_set_0/output_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(y.numpy(), "y").SerializeToString())
os.makedirs(os.path.join(out, "pytorch-converted"), exist_ok=True)
