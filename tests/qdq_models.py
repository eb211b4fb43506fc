#!/usr/bin/env python3
"""QDQ (int8) models for tests/check_qconv.c, with references.

Each model NAME is NAME.onnx (QuantizeLinear/DequantizeLinear around the
convolutions' inputs, int8 weights per output channel with their
DequantizeLinear, int32 biases as ONNX Runtime's quantizer writes them) and
NAME/input_0.pb, NAME/output_0.pb: the QDQ model's own result, computed by
PyTorch with the same fake quantization (round half to even, saturation).

  qconv_exact  one Conv whose input already lies on the int8 grid (a power-
               of-two scale): int8 changes nothing, so the simulator's int8
               kernel must reproduce the reference up to fp16 rounding.
  qconv_bn     Conv -> BatchNormalization -> Relu on a QDQ input: the
               compiler folds the BN into the int8 conv's scales.
  qnet         a small CNN: conv+relu, strided conv with 40 channels, a
               residual block, a depthwise conv (stays fp16), a 1x1 conv
               with 48 channels, global pooling and a Linear layer.
  qnode_conv, qnode_gemm, qnode_matmul
               one Conv, Gemm (2-D Linear) or MatMul (3-D Linear) with
               quantized input, weights and output (ONNX Runtime's QDQ form:
               Q/DQ after the op too); NAME/step.pb holds the output's scale.
  qnode_res    a residual block, y = relu(c2(r) + r) with r = relu(c1(x)),
               whose Add reads r through the Q/DQ pair c2 reads it by (the
               residual int8 across the Add), output quantized as above;
               NAME/rstep.pb holds the residual's scale.
  qchain_l2    four convs at batch 8 whose activations outgrow half the
               310P3's L2 (an L2-fused int8 chain).

usage: qdq_models.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import TensorProto as P, helper as h, numpy_helper as nh

torch.manual_seed(0)
rng = np.random.default_rng(0)
out = sys.argv[1] if len(sys.argv) > 1 else "qdq_testdata"
os.makedirs(out, exist_ok=True)


def fq(x, s):
    """QuantizeLinear + DequantizeLinear, symmetric int8."""
    return torch.clamp(torch.round(x / s), -128, 127) * s


def wquant(w):
    """Per-output-channel symmetric int8: (q, scale)."""
    a = w.detach().abs().reshape(w.shape[0], -1).max(1).values.clamp(min=1e-8)
    s = (a / 127).to(torch.float32)
    q = torch.clamp(torch.round(w.detach() / s.reshape(-1, *[1] * (w.dim() - 1))), -127, 127)
    return q.to(torch.int8), s


def write(name, x, y):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    onnx.save_tensor(nh.from_array(x.numpy().astype(np.float32)), os.path.join(d, "input_0.pb"))
    onnx.save_tensor(nh.from_array(y.numpy().astype(np.float32)), os.path.join(d, "output_0.pb"))


def qdq_onnx(model, name, x, act_scales, qmods, fold=True):
    """Export model (whose quantized modules already hold dequantized
    weights) and put Q/DQ pairs on the quantized modules' inputs, int8
    weights and int32 biases, in module call order = ONNX node order."""
    path = os.path.join(out, name + ".onnx")
    torch.onnx.export(model, x, path, opset_version=13, input_names=["x"],
                      output_names=["y"], do_constant_folding=fold)
    m = onnx.load(path)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    def target(n):
        return n.op_type in ("Conv", "Gemm") or (n.op_type == "MatMul" and n.input[1] in inits)
    targets = [n for n in g.node if target(n)]
    assert len(targets) == len(qmods), (len(targets), len(qmods))
    nodes = []
    k = 0
    for n in g.node:
        if target(n):
            mod, sx = qmods[k], act_scales[k]
            q, sw = wquant(mod.weight)
            waxis = 0
            if n.op_type == "MatMul":  # torch's Linear exports x @ W^T: [K, N], scales on N
                q, waxis = q.t().contiguous(), 1
            p = "q%d_" % k
            new_inits = [nh.from_array(np.array(sx, np.float32), p + "xs"),
                         nh.from_array(np.array(0, np.int8), p + "xz"),
                         nh.from_array(q.numpy(), p + "wq"),
                         nh.from_array(sw.numpy(), p + "ws"),
                         nh.from_array(np.zeros(sw.shape, np.int8), p + "wz")]
            nodes += [h.make_node("QuantizeLinear", [n.input[0], p + "xs", p + "xz"], [p + "xq"]),
                      h.make_node("DequantizeLinear", [p + "xq", p + "xs", p + "xz"], [p + "xd"]),
                      h.make_node("DequantizeLinear", [p + "wq", p + "ws", p + "wz"], [p + "wd"],
                                  axis=waxis)]
            ins = [p + "xd", p + "wd"]
            if n.op_type != "MatMul" and len(n.input) > 2 and mod.bias is not None:
                # the bias: int32 at scale sx * sw
                b = nh.to_array(inits[n.input[2]])
                bs = (sx * sw.numpy()).astype(np.float32)
                bq = np.round(b / bs).astype(np.int32)
                new_inits += [nh.from_array(bq, p + "bq"), nh.from_array(bs, p + "bs"),
                              nh.from_array(np.zeros(bs.shape, np.int32), p + "bz")]
                nodes.append(h.make_node("DequantizeLinear", [p + "bq", p + "bs", p + "bz"],
                                         [p + "bd"], axis=0))
                ins.append(p + "bd")
                # the reference uses the bias the model now holds
                mod.bias.data = torch.from_numpy(bq.astype(np.float32) * bs)
            g.initializer.extend(new_inits)
            del n.input[:]
            n.input.extend(ins)
            k += 1
        nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in g.node for i in n.input}
    keep = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    onnx.checker.check_model(m)
    onnx.save(m, path)


def quantize_model(model, x, qtypes=(nn.Conv2d, nn.Linear)):
    """Min-max activation scales from one forward pass; weights replaced by
    their dequantized int8 values; returns (scales, modules) in call order."""
    mods, amax = [], []

    def pre(mod, inp):
        mods.append(mod)
        amax.append(float(inp[0].detach().abs().max()))

    hs = [mm.register_forward_pre_hook(pre) for mm in model.modules() if isinstance(mm, qtypes)]
    with torch.no_grad():
        model(x)
    for hh in hs:
        hh.remove()
    scales = [a / 127 for a in amax]
    for mod in mods:
        q, s = wquant(mod.weight)
        mod.weight.data = q.to(torch.float32) * s.reshape(-1, *[1] * (mod.weight.dim() - 1))
    return scales, mods


def reference(model, x, scales, mods):
    order = {id(m): i for i, m in enumerate(mods)}

    def pre(mod, inp):
        return (fq(inp[0], scales[order[id(mod)]]),)

    hs = [m.register_forward_pre_hook(pre) for m in mods]
    with torch.no_grad():
        y = model(x)
    for hh in hs:
        hh.remove()
    return y



def output_qdq(name, y):
    """Quantize the model's output too (ONNX Runtime's quantizer puts Q/DQ
    after every quantized op): the result lies on a grid of step s_y, the
    unit the node tests compare in.  Returns the fake-quantized y and s_y."""
    path = os.path.join(out, name + ".onnx")
    m = onnx.load(path)
    g = m.graph
    sy = float(y.abs().max()) / 127
    last = [n for n in g.node if g.output[0].name in n.output][0]
    last.output[0] = "y_f"
    g.initializer.extend([nh.from_array(np.array(sy, np.float32), "ys"),
                          nh.from_array(np.array(0, np.int8), "yz")])
    g.node.extend([h.make_node("QuantizeLinear", ["y_f", "ys", "yz"], ["y_q"]),
                   h.make_node("DequantizeLinear", ["y_q", "ys", "yz"], [g.output[0].name])])
    onnx.checker.check_model(m)
    onnx.save(m, path)
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    onnx.save_tensor(nh.from_array(np.array([sy], np.float32)), os.path.join(d, "step.pb"))
    return fq(y, sy), sy


def node_model(name, mod, x):
    """One Conv, Gemm or MatMul with QDQ input, weights and output."""
    mod.eval()
    sc, mods = quantize_model(mod, x)
    qdq_onnx(mod, name, x, sc, mods)
    y, _ = output_qdq(name, reference(mod, x, sc, mods))
    write(name, x, y)


class ResBlock(nn.Module):
    """r = relu(c1(x)); y = relu(c2(r) + fq(r)) (rs: the residual's scale,
    set once it is known; 0: the float residual)."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(16, 64, 3, padding=1)
        self.c2 = nn.Conv2d(64, 64, 3, padding=1)
        self.rs = 0.0

    def forward(self, x):
        r = torch.relu(self.c1(x))
        return torch.relu(self.c2(r) + (fq(r, self.rs) if self.rs else r))


def res_model(name, x):
    """The residual block with its Add reading c2's input pair."""
    mod = ResBlock().eval()
    sc, mods = quantize_model(mod, x)
    qdq_onnx(mod, name, x, sc, mods)
    path = os.path.join(out, name + ".onnx")
    m = onnx.load(path)
    conv2 = [n for n in m.graph.node if n.op_type == "Conv"][1]
    pair = [n for n in m.graph.node if n.op_type == "DequantizeLinear" and
            n.output[0] == conv2.input[0]][0]
    quant = [n for n in m.graph.node if n.output[0] == pair.input[0]][0]
    add = [n for n in m.graph.node if n.op_type == "Add"][0]
    k = list(add.input).index(quant.input[0])
    add.input[k] = pair.output[0]
    onnx.save(m, path)
    mod.rs = sc[1]
    y, _ = output_qdq(name, reference(mod, x, sc, mods))
    write(name, x, y)
    onnx.save_tensor(nh.from_array(np.array([sc[1]], np.float32)),
                     os.path.join(out, name, "rstep.pb"))


def builtin_models():
    # node tests (within one output step of ONNX Runtime)
    node_model("qnode_conv", nn.Conv2d(24, 40, 3, stride=2, padding=1),
               torch.from_numpy(rng.standard_normal((2, 24, 15, 17)).astype(np.float32)))
    node_model("qnode_gemm", nn.Linear(200, 72),
               torch.from_numpy(rng.standard_normal((6, 200)).astype(np.float32)))
    node_model("qnode_matmul", nn.Linear(96, 136),
               torch.from_numpy(rng.standard_normal((2, 40, 96)).astype(np.float32)))

    # qconv_exact: x on the grid of scale 2^-4, int8 values in [-100, 100]
    conv = nn.Conv2d(40, 24, 3, stride=1, padding=1).eval()
    x = torch.from_numpy(rng.integers(-100, 101, (2, 40, 10, 12)).astype(np.float32) / 16)
    sx = 1.0 / 16
    _, _ = None, None
    q, s = wquant(conv.weight)
    conv.weight.data = q.to(torch.float32) * s.reshape(-1, 1, 1, 1)
    qdq_onnx(conv, "qconv_exact", x, [sx], [conv])
    write("qconv_exact", x, reference(conv, x, [sx], [conv]))


    class ConvBN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(16, 32, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(32)

        def forward(self, x):
            return torch.relu(self.bn(self.conv(x)))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 16, 3, padding=1)
            self.c2 = nn.Conv2d(16, 40, 3, stride=2, padding=1)
            self.c3 = nn.Conv2d(40, 40, 3, padding=1)
            self.dw = nn.Conv2d(40, 40, 3, padding=1, groups=40)
            self.c4 = nn.Conv2d(40, 48, 1)
            self.fc = nn.Linear(48, 10)

        def forward(self, x):
            x = torch.relu(self.c1(x))
            x = torch.relu(self.c2(x))
            x = torch.relu(self.c3(x) + x)
            x = torch.relu(self.dw(x))
            x = self.c4(x)
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


    for name, model, shape in (("qconv_bn", ConvBN(), (2, 16, 14, 14)),
                               ("qnet", Net(), (2, 3, 32, 32))):
        model.eval()
        for mm in model.modules():  # non-trivial BatchNorm statistics
            if isinstance(mm, nn.BatchNorm2d):
                mm.running_mean.uniform_(-0.5, 0.5)
                mm.running_var.uniform_(0.5, 2.0)
                mm.weight.data.uniform_(0.5, 1.5)
                mm.bias.data.uniform_(-0.3, 0.3)
        x = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
        sc, mods = quantize_model(model, x)
        if name == "qconv_bn":
            # the exporter folds an eval BatchNormalization into the Conv: export
            # the Conv alone and append BatchNormalization and Relu by hand
            qdq_onnx(model.conv, name, x, sc, mods)
            path = os.path.join(out, name + ".onnx")
            m = onnx.load(path)
            bn = model.bn
            m.graph.node[-1].output[0] = "c"
            m.graph.initializer.extend([
                nh.from_array(bn.weight.detach().numpy(), "bn_s"),
                nh.from_array(bn.bias.detach().numpy(), "bn_b"),
                nh.from_array(bn.running_mean.numpy(), "bn_m"),
                nh.from_array(bn.running_var.numpy(), "bn_v")])
            m.graph.node.extend([
                h.make_node("BatchNormalization", ["c", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"],
                            epsilon=bn.eps),
                h.make_node("Relu", ["bn"], ["y"])])
            onnx.checker.check_model(m)
            onnx.save(m, path)
        else:
            qdq_onnx(model, name, x, sc, mods)
        write(name, x, reference(model, x, sc, mods))

    # last, so that the models above keep their random draws
    res_model("qnode_res", torch.from_numpy(rng.standard_normal((2, 16, 12, 14)).astype(np.float32)))

    # qchain_l2: int8 convs whose activations at batch 8 outgrow half the
    # 310P3's L2, so that L2 fusion slices c1..c2 (c0 reads the graph input,
    # c3 writes its output: neither is sliced)
    class Chain(nn.Module):
        def __init__(self):
            super().__init__()
            self.c0 = nn.Conv2d(16, 32, 3, padding=1)
            self.c1 = nn.Conv2d(32, 128, 1)
            self.c2 = nn.Conv2d(128, 128, 1)
            self.c3 = nn.Conv2d(128, 32, 1)

        def forward(self, x):
            x = torch.relu(self.c0(x))
            x = torch.relu(self.c1(x))
            x = torch.relu(self.c2(x))
            return self.c3(x)


    chain = Chain().eval()
    x = torch.from_numpy(rng.standard_normal((8, 16, 96, 96)).astype(np.float32))
    sc, mods = quantize_model(chain, x)
    qdq_onnx(chain, "qchain_l2", x, sc, mods)
    write("qchain_l2", x, reference(chain, x, sc, mods))


builtin_models()
