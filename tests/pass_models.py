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

    layernorm_models(out, rng)
    gelu_models(out)
    bcast_models(out)
    attention_models(out)
    concat_models(out)
    # x + sublayer(x) into a LayerNormalization (opset 17): the Add fuses in
    ab = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 10, 48]) for n in "ab"]
    yl = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10, 48])
    sc = numpy_helper.from_array(rng.uniform(0.5, 1.5, 48).astype(np.float32), "sc")
    bi = numpy_helper.from_array(rng.uniform(-0.2, 0.2, 48).astype(np.float32), "bi")
    save(out, "ln_residual", [
        helper.make_node("Add", ["a", "b"], ["s"], name="residual"),
        helper.make_node("LayerNormalization", ["s", "sc", "bi"], ["y"], name="ln", axis=-1,
                         epsilon=1e-5)], ab, [yl], [sc, bi], opset=17)


def det_input(shape, k=0):
    """The inputs check_passes.c's run_switched feeds: deterministic values."""
    i = np.arange(int(np.prod(shape)))
    return ((((i + 13 * k) * 37) % 101 - 50) / 25.0).astype(np.float32).reshape(shape)


def layernorm_models(out, rng):
    """torch's nn.LayerNorm as exported before opset 17 (decomposed), with its
    output for det_input saved as NAME.ref (raw float32); and hand-built
    variants: Mul(d, d) and Mul by Reciprocal(Sqrt), and one whose Sub output
    has another reader (not fusable)."""
    import torch
    for name, shape in (("ln_torch768", (2, 16, 768)), ("ln_torch100", (3, 5, 100))):
        C = shape[-1]
        m = torch.nn.LayerNorm(C, eps=1e-5)
        with torch.no_grad():
            m.weight.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, C).astype(np.float32)))
            m.bias.copy_(torch.from_numpy(rng.uniform(-1, 1, C).astype(np.float32)))
        m.eval()
        x = torch.from_numpy(det_input(shape))
        path = os.path.join(out, name + ".onnx")
        torch.onnx.export(m, (x,), path, opset_version=14, input_names=["x"],
                          output_names=["y"])
        onnx.save(onnx.shape_inference.infer_shapes(onnx.load(path)), path)
        with torch.no_grad():
            m(x).numpy().astype(np.float32).tofile(os.path.join(out, name + ".ref"))
    # Mul(d, d), Mul by Reciprocal, axes as an attribute, C = 100
    C, shape = 100, [6, 100]
    xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    yo = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    g = rng.uniform(0.5, 1.5, C).astype(np.float32)
    b = rng.uniform(-1, 1, C).astype(np.float32)
    inits = [numpy_helper.from_array(g, "gamma"), numpy_helper.from_array(b, "beta"),
             numpy_helper.from_array(np.array(1e-5, np.float32), "eps")]
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["m"], name="mean", axes=[-1]),
        helper.make_node("Sub", ["x", "m"], ["d"], name="sub"),
        helper.make_node("Mul", ["d", "d"], ["p"], name="sq"),
        helper.make_node("ReduceMean", ["p"], ["v"], name="var", axes=[1]),
        helper.make_node("Add", ["eps", "v"], ["a"], name="addeps"),
        helper.make_node("Sqrt", ["a"], ["s"], name="sqrt"),
        helper.make_node("Reciprocal", ["s"], ["r"], name="rec"),
        helper.make_node("Mul", ["r", "d"], ["n"], name="norm"),
        helper.make_node("Mul", ["n", "gamma"], ["yg"], name="scale"),
        helper.make_node("Add", ["yg", "beta"], ["y"], name="bias")]
    save(out, "ln_mul", nodes, [xi], [yo], inits, shapes=True)
    x = det_input(shape)
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    ((x - mu) / np.sqrt(var + 1e-5) * g + b).astype(np.float32).tofile(
        os.path.join(out, "ln_mul.ref"))
    # the deviation d is also a graph output: nothing may be fused
    d_out = helper.make_tensor_value_info("d", TensorProto.FLOAT, shape)
    save(out, "ln_shared", nodes, [xi], [yo, d_out], inits, shapes=True)
    # the ONNX op itself over row lengths around the 64-lane fp32 and
    # 128-lane fp16 repeats (the masked tails), up to 4096
    for C in (1, 17, 64, 65, 129, 4096):
        shape = [37, C]
        g = rng.uniform(0.5, 1.5, C).astype(np.float32)
        b = rng.uniform(-1, 1, C).astype(np.float32)
        save(out, f"ln_c{C}", [helper.make_node(
            "LayerNormalization", ["x", "gamma", "beta"], ["y"], name="ln", epsilon=1e-5)],
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
            [numpy_helper.from_array(g, "gamma"), numpy_helper.from_array(b, "beta")],
            opset=17)
        x = det_input(shape)
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        ((x - mu) / np.sqrt(var + 1e-5) * g + b).astype(np.float32).tofile(
            os.path.join(out, f"ln_c{C}.ref"))


def gelu_models(out):
    """GELU as torch 1.13 exports it (nn.GELU, F.gelu: erf and tanh forms),
    hand-written variants, and one whose Erf output is also a graph output."""
    shape = [2, 8, 40]
    xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    yo = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)

    def c(name, v):
        return numpy_helper.from_array(np.array(v, np.float32), name)
    mk = helper.make_node
    # torch: Div(x, sqrt2) -> Erf -> Add 1 -> Mul(x, .) -> Mul(., 0.5)
    erf_nodes = [mk("Div", ["x", "sqrt2"], ["d"], name="div"),
                 mk("Erf", ["d"], ["e"], name="erf"),
                 mk("Add", ["e", "one"], ["a"], name="add"),
                 mk("Mul", ["x", "a"], ["m"], name="mul"),
                 mk("Mul", ["m", "half"], ["y"], name="mul_half")]
    consts = [c("sqrt2", 1.4142135381698608), c("one", 1.0), c("half", 0.5)]
    save(out, "gelu_erf", erf_nodes, [xi], [yo], consts)
    # x * 0.5 * (1 + erf(x * 0.70710678)), written by hand
    save(out, "gelu_erf_hand", [
        mk("Mul", ["x", "half"], ["h"], name="mul_half"),
        mk("Mul", ["rs2", "x"], ["d"], name="scale"),
        mk("Erf", ["d"], ["e"], name="erf"),
        mk("Add", ["one", "e"], ["a"], name="add"),
        mk("Mul", ["h", "a"], ["y"], name="mul")], [xi], [yo],
        [c("rs2", 0.7071067811865476), c("one", 1.0), c("half", 0.5)])
    # the Erf's output is read elsewhere too: nothing fuses
    eo = helper.make_tensor_value_info("e", TensorProto.FLOAT, shape)
    save(out, "gelu_erf_shared", erf_nodes, [xi], [yo, eo], consts)
    # torch's tanh form (approximate='tanh')
    save(out, "gelu_tanh", [
        mk("Mul", ["x", "x"], ["x2"], name="sq"),
        mk("Mul", ["x", "x2"], ["x3"], name="cube"),
        mk("Mul", ["k1", "x3"], ["w"], name="mul_k1"),
        mk("Add", ["x", "w"], ["s"], name="add_x"),
        mk("Mul", ["k0", "s"], ["t"], name="mul_k0"),
        mk("Tanh", ["t"], ["th"], name="tanh"),
        mk("Add", ["one", "th"], ["a"], name="add"),
        mk("Mul", ["x", "a"], ["m"], name="mul"),
        mk("Mul", ["half", "m"], ["y"], name="mul_half")], [xi], [yo],
        [c("k1", 0.044714998453855515), c("k0", 0.7978845834732056), c("one", 1.0),
         c("half", 0.5)])
    # with Pow(x, 3) and the 0.5 applied to the sum
    save(out, "gelu_tanh_pow", [
        mk("Pow", ["x", "three"], ["x3"], name="cube"),
        mk("Mul", ["x3", "k1"], ["w"], name="mul_k1"),
        mk("Add", ["w", "x"], ["s"], name="add_x"),
        mk("Mul", ["s", "k0"], ["t"], name="mul_k0"),
        mk("Tanh", ["t"], ["th"], name="tanh"),
        mk("Add", ["th", "one"], ["a"], name="add"),
        mk("Mul", ["a", "half"], ["ah"], name="mul_half"),
        mk("Mul", ["x", "ah"], ["y"], name="mul")], [xi], [yo],
        [c("three", 3.0), c("k1", 0.044715), c("k0", 0.7978845608), c("one", 1.0),
         c("half", 0.5)])
    # erf and tanh alone, for their precision over a range
    r = helper.make_tensor_value_info("x", TensorProto.FLOAT, [320, 128])
    ro = helper.make_tensor_value_info("y", TensorProto.FLOAT, [320, 128])
    save(out, "erf_range", [mk("Erf", ["x"], ["y"], name="erf")], [r], [ro], [])
    save(out, "tanh_range", [mk("Tanh", ["x"], ["y"], name="tanh")], [r], [ro], [])


# name: (shape of a, shape of b (or a constant), op); both activations
# unless b is named "const"
BCAST_CASES = {
    "bc_last": ([2, 40, 768], [2, 40, 1], "Sub"),       # LayerNorm's x - mean
    "bc_last_rev": ([2, 40, 1], [2, 40, 768], "Sub"),   # the per-row value first
    "bc_lead": ([3, 24, 40], [24, 40], "Add"),
    "bc_lead_rev": ([1, 24, 40], [3, 24, 40], "Mul"),
    "bc_mask": ([2, 12, 20, 20], [2, 1, 1, 20], "Add"),  # an attention mask
    "bc_both": ([2, 1, 48], [1, 5, 48], "Add"),
    "bc_se": ([2, 40, 6, 6], [2, 40, 1, 1], "Mul"),      # squeeze-excitation
    "bc_chan1": ([2, 1, 3, 3], [2, 20, 3, 3], "Sub"),
    "bc_wide": ([3, 4200], [3, 1], "Add"),               # rows of 263 blocks
    "bc_rows": ([600, 32], [600, 1], "Div"),
    "bc_act_scalar": ([5, 7], [1], "Mul"),
    "bc_const_nd": ([4, 6, 10], "const:4,1,10", "Div"),
    "bc_const_nc": ([2, 20, 5, 5], "const:5,5", "Add"),
}


def bcast_models(out):
    """Broadcasting Add/Sub/Mul/Div (kern_bcast_nd.c), with the output for
    det_input (both inputs; input k with k) saved as NAME.ref."""
    ops = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}
    for name, (sa, sb, op) in BCAST_CASES.items():
        a = det_input(sa, 0)
        inputs = [helper.make_tensor_value_info("a", TensorProto.FLOAT, sa)]
        inits = []
        if isinstance(sb, str):
            shp = [int(v) for v in sb.split(":")[1].split(",")]
            b = (np.arange(np.prod(shp)).reshape(shp) % 7 + 1.5).astype(np.float32)
            inits.append(numpy_helper.from_array(b, "b"))
        else:
            b = det_input(sb, 1)  # some zeros: Div checks its infinities too
            inputs.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, sb))
        with np.errstate(divide="ignore", invalid="ignore"):
            y = ops[op](a, b).astype(np.float32)
        yo = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))
        save(out, name, [helper.make_node(op, ["a", "b"], ["y"], name=name)], inputs, [yo],
             inits)
        y.tofile(os.path.join(out, name + ".ref"))


def attention_models(out):
    """Attention scores with their scale on Q (torch's nn.MultiheadAttention)
    or on the scores (HuggingFace), with a [B,1,S] mask, and with the scaled
    scores also a graph output (no fusion); NAME.ref holds numpy's output
    for det_input."""
    B, S, D = 2, 40, 16
    q, k = det_input([B, S, D], 0), det_input([B, D, S], 1)
    mask = np.where(np.arange(B * S).reshape(B, 1, S) % 7 == 3, -10000.0, 0.0)
    mask = mask.astype(np.float32)
    c = numpy_helper.from_array(np.array(4.0, np.float32), "c")
    m = numpy_helper.from_array(mask, "m")
    inputs = [helper.make_tensor_value_info("q", TensorProto.FLOAT, [B, S, D]),
              helper.make_tensor_value_info("k", TensorProto.FLOAT, [B, D, S])]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, S, S])
    cases = {
        "att_pre": ([helper.make_node("Div", ["q", "c"], ["qs"], name="scale"),
                     helper.make_node("MatMul", ["qs", "k"], ["s"], name="scores")], False),
        "att_post": ([helper.make_node("MatMul", ["q", "k"], ["s0"], name="scores"),
                      helper.make_node("Mul", ["s0", "quarter"], ["s"], name="scale")], False),
        "att_mask": ([helper.make_node("MatMul", ["q", "k"], ["s0"], name="scores"),
                      helper.make_node("Div", ["s0", "c"], ["s1"], name="scale"),
                      helper.make_node("Add", ["s1", "m"], ["s"], name="mask")], True),
    }
    quarter = numpy_helper.from_array(np.array(0.25, np.float32), "quarter")
    for name, (nodes, masked) in cases.items():
        sc = q @ k / 4 + (mask if masked else 0)
        e = np.exp(sc - sc.max(-1, keepdims=True))
        ref = (e / e.sum(-1, keepdims=True)).astype(np.float32)
        save(out, name, nodes + [helper.make_node("Softmax", ["s"], ["y"], name="softmax",
                                                  axis=-1)],
             inputs, [y], [c, m, quarter])
        ref.tofile(os.path.join(out, name + ".ref"))
    # the scaled scores are also an output: the scale must stay
    s_out = helper.make_tensor_value_info("s", TensorProto.FLOAT, [B, S, S])
    save(out, "att_shared", [helper.make_node("MatMul", ["q", "k"], ["s0"], name="scores"),
                             helper.make_node("Div", ["s0", "c"], ["s"], name="scale"),
                             helper.make_node("Softmax", ["s"], ["y"], name="softmax",
                                              axis=-1)], inputs, [y, s_out], [c])


def concat_models(out):
    # Concat in place (ConcatInPlacePass): conv and pool outputs written into
    # their slot, a nested concat (cat1 inside cat2) read by a Conv and a
    # BatchNormalization as a view, and concats that must copy: an unaligned
    # first input (8 channels), a graph input, a graph output.  With three
    # images the views' images are a stride apart (and on a 2-core chip a
    # block's pooled planes cross from one image to the next).
    rng = np.random.default_rng(11)
    for nb in (1, 3):
        xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, [nb, 48, 8, 8])
        ys = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        def wt(name, co, ci, k):
            return numpy_helper.from_array(
                (rng.standard_normal((co, ci, k, k)) / np.sqrt(ci * k * k)).astype(np.float32),
                name)
        bnp = [numpy_helper.from_array(v.astype(np.float32), n) for v, n in (
            (rng.uniform(0.5, 1.5, 96), "cs"), (rng.uniform(-1, 1, 96), "cB"),
            (rng.uniform(-1, 1, 96), "cm"), (rng.uniform(0.5, 1.5, 96), "cv"))]
        save(out, "concat_b%d" % nb, [
            helper.make_node("Conv", ["x", "w1"], ["c1"], name="c1"),
            helper.make_node("Conv", ["x", "w2"], ["c2"], name="c2", pads=[1, 1, 1, 1]),
            helper.make_node("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[3, 3],
                             pads=[1, 1, 1, 1]),
            helper.make_node("Concat", ["c1", "c2", "p"], ["cat1"], name="cat1", axis=1),
            helper.make_node("Conv", ["cat1", "w3"], ["c3"], name="c3"),
            helper.make_node("BatchNormalization", ["cat1", "cs", "cB", "cm", "cv"], ["b1"],
                             name="bn"),
            helper.make_node("Relu", ["b1"], ["rb"], name="relu"),
            helper.make_node("Concat", ["cat1", "c3"], ["cat2"], name="cat2", axis=1),
            helper.make_node("Conv", ["cat2", "w4"], ["c4"], name="c4"),
            helper.make_node("Concat", ["c4", "x"], ["u"], name="unaligned", axis=1),
            helper.make_node("GlobalAveragePool", ["u"], ["gu"], name="gap_u"),
            helper.make_node("GlobalAveragePool", ["rb"], ["gb"], name="gap_b"),
            helper.make_node("AveragePool", ["cat2"], ["ap"], name="apool",
                             kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("GlobalAveragePool", ["ap"], ["ga"], name="gap_a"),
            # a pool reading a view (cat1 inside cat2) and one writing a slot
            helper.make_node("AveragePool", ["cat1"], ["ap1"], name="apool1",
                             kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("GlobalAveragePool", ["ap1"], ["g1"], name="gap_1"),
            helper.make_node("Conv", ["x", "w6"], ["c6"], name="c6"),
            helper.make_node("AveragePool", ["c6"], ["ap2"], name="apool2",
                             kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Conv", ["x", "w5"], ["c5"], name="c5", pads=[1, 1, 1, 1],
                             strides=[2, 2]),
            helper.make_node("Concat", ["ap2", "c5"], ["cat3"], name="cat3", axis=1),
            helper.make_node("GlobalAveragePool", ["cat3"], ["g3"], name="gap_3"),
            helper.make_node("Concat", ["gu", "gb", "ga", "g1", "g3"], ["y"], name="out",
                             axis=1)],
            [xs], [ys], [wt("w1", 32, 48, 1), wt("w2", 16, 48, 3), wt("w3", 16, 96, 1),
                         wt("w4", 8, 112, 1), wt("w5", 16, 48, 3),
                         wt("w6", 32, 48, 1)] + bnp)

    # Split and Slice of whole channel blocks as views (SplitInPlacePass): a
    # conv's output split 32/16/16, read by a Conv, a pool and a
    # BatchNormalization (they take images a stride apart) and by a Relu
    # (which does not: a copy with several images); a Slice of the first
    # image (one contiguous range) and one ending inside a channel block.
    for nb in (1, 3):
        xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, [nb, 16, 8, 8])
        ys = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        bnp = [numpy_helper.from_array(v.astype(np.float32), n) for v, n in (
            (rng.uniform(0.5, 1.5, 16), "ss"), (rng.uniform(-1, 1, 16), "sB"),
            (rng.uniform(-1, 1, 16), "sm"), (rng.uniform(0.5, 1.5, 16), "sv"))]
        sizes = numpy_helper.from_array(np.array([32, 16, 16], np.int64), "sizes")
        def ints(name, v):
            return numpy_helper.from_array(np.array(v, np.int64), name)
        save(out, "split_b%d" % nb, [
            helper.make_node("Conv", ["x", "w0"], ["c0"], name="c0", pads=[1, 1, 1, 1]),
            helper.make_node("Split", ["c0", "sizes"], ["s0", "s1", "s2"], name="split",
                             axis=1),
            helper.make_node("Conv", ["s0", "w1"], ["c1"], name="c1"),
            helper.make_node("MaxPool", ["s1"], ["p1"], name="pool", kernel_shape=[2, 2],
                             strides=[2, 2]),
            helper.make_node("BatchNormalization", ["s2", "ss", "sB", "sm", "sv"], ["b2"],
                             name="bn"),
            helper.make_node("Relu", ["s2"], ["r2"], name="relu"),
            helper.make_node("Slice", ["c0", "st", "en", "ax"], ["sl"], name="slice_img"),
            helper.make_node("Slice", ["c0", "st2", "en2", "ax2"], ["sl2"], name="slice_odd"),
            helper.make_node("GlobalAveragePool", ["c1"], ["g1"], name="g1"),
            helper.make_node("GlobalAveragePool", ["p1"], ["g2"], name="g2"),
            helper.make_node("Add", ["b2", "r2"], ["a2"], name="add"),
            helper.make_node("GlobalAveragePool", ["a2"], ["g3"], name="g3"),
            helper.make_node("ReduceMean", ["sl"], ["g4"], name="g4", axes=[0, 2, 3],
                             keepdims=1),
            helper.make_node("ReduceMean", ["sl2"], ["g5"], name="g5", axes=[2, 3],
                             keepdims=1),
            helper.make_node("Concat", ["g1", "g2", "g3"], ["gc"], name="gcat", axis=1),
            helper.make_node("Flatten", ["gc"], ["gf"], name="flat"),
            helper.make_node("Flatten", ["g4"], ["g4f"], name="flat4"),
            helper.make_node("Flatten", ["g5"], ["g5f"], name="flat5"),
            helper.make_node("Concat", ["gf", "g4f"], ["y0"], name="ycat0", axis=0),
            helper.make_node("ReduceMean", ["g5f"], ["g5m"], name="g5m", axes=[0, 1],
                             keepdims=1),
            helper.make_node("Add", ["y0", "g5m"], ["y"], name="ysum")],
            [xs], [ys], [numpy_helper.from_array(
                (rng.standard_normal((64, 16, 3, 3)) / 12).astype(np.float32), "w0"),
                numpy_helper.from_array(
                (rng.standard_normal((16, 32, 1, 1)) / 6).astype(np.float32), "w1"),
                sizes, ints("st", [0]), ints("en", [1]), ints("ax", [0]),
                ints("st2", [16]), ints("en2", [40]), ints("ax2", [1])] + bnp)

    # L2 fusion (L2FusionPass): a chain of convs, a residual, a pool and a
    # BatchNormalization over 8 images whose activations outgrow a small L2
    # (the test shrinks it): run a slice of the batch at a time
    xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16, 32, 32])
    ys = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    def wt(name, co, ci, k):
        return numpy_helper.from_array(
            (rng.standard_normal((co, ci, k, k)) / np.sqrt(ci * k * k)).astype(np.float32), name)
    bnl = [numpy_helper.from_array(v.astype(np.float32), n) for v, n in (
        (rng.uniform(0.5, 1.5, 32), "ls"), (rng.uniform(-1, 1, 32), "lB"),
        (rng.uniform(-1, 1, 32), "lm"), (rng.uniform(0.5, 1.5, 32), "lv"))]
    save(out, "l2chain", [
        helper.make_node("Conv", ["x", "v1"], ["a1"], name="l2c1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a1"], ["r1"], name="l2r1"),
        helper.make_node("Conv", ["r1", "v2"], ["a2"], name="l2c2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["a2", "r1"], ["s2"], name="l2add"),
        helper.make_node("Relu", ["s2"], ["r2"], name="l2r2"),
        helper.make_node("BatchNormalization", ["r2", "ls", "lB", "lm", "lv"], ["b2"],
                         name="l2bn"),
        helper.make_node("MaxPool", ["b2"], ["p2"], name="l2pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p2", "v3"], ["a3"], name="l2c3"),
        helper.make_node("GlobalAveragePool", ["a3"], ["y"], name="l2gap")],
        [xs], [ys], [wt("v1", 32, 16, 3), wt("v2", 32, 32, 3), wt("v3", 16, 32, 1)] + bnl)

    # L2 fusion of a stem: a 7x7 stride-2 conv on a 3-channel image input (the
    # small-channel path's C04 layout with --enable_small_channel=1), a max
    # pool and a conv over 8 images: the first conv joins the chain
    xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 3, 64, 64])
    save(out, "l2stem", [
        helper.make_node("Conv", ["x", "s1"], ["a1"], name="stc1", pads=[3, 3, 3, 3],
                         strides=[2, 2]),
        helper.make_node("Relu", ["a1"], ["r1"], name="str1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="stpool", kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["p1", "s2"], ["a2"], name="stc2", pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["a2"], ["y"], name="stgap")],
        [xi], [ys], [wt("s1", 16, 3, 7), wt("s2", 32, 16, 3)])
    rewrite_models(out, np.random.default_rng(11))


def rewrite_models(out, rng):
    """The rewrites before shape inference (pass_runtime_params.c,
    pass_einsum.c, pass_bn_training.c), each model NAME.onnx with
    NAME/input_N.pb and the numpy reference NAME/output_N.pb."""
    F, I8, U8 = TensorProto.FLOAT, TensorProto.INT8, TensorProto.UINT8

    def vi(n, t, shape):
        return helper.make_tensor_value_info(n, t, shape)

    def case(name, nodes, ins, arrays, outs, ys, inits=(), opset=13):
        save(out, name, nodes, [vi(n, t, list(a.shape)) for (n, t), a in zip(ins, arrays)],
             [vi(n, t, list(y.shape)) for (n, t), y in zip(outs, ys)], list(inits), opset)
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        for k, ((n, _), a) in enumerate(zip(ins, arrays)):
            onnx.save_tensor(numpy_helper.from_array(a, n), os.path.join(d, "input_%d.pb" % k))
        for k, y in enumerate(ys):
            onnx.save_tensor(numpy_helper.from_array(y), os.path.join(d, "output_%d.pb" % k))

    def c(n, v):
        return numpy_helper.from_array(np.asarray(v), n)

    x4 = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    lo, hi = np.float32(-0.4), np.float32(0.6)
    # Clip's bounds at run time: both (4-D: reshaped to 4-D), the lower one
    # above a constant upper one (min(max(x, lo), hi) is hi), a constant
    # lower and a run-time upper one
    case("rt_clip_both", [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
         [("x", F), ("lo", F), ("hi", F)], [x4, np.array(lo), np.array(hi)],
         [("y", F)], [np.clip(x4, lo, hi)])
    case("rt_clip_lo_above_hi", [helper.make_node("Clip", ["x", "lo", "c"], ["y"])],
         [("x", F), ("lo", F)], [x4, np.array(np.float32(0.5))], [("y", F)],
         [np.minimum(np.maximum(x4, np.float32(0.5)), np.float32(0.2))],
         [c("c", np.float32(0.2))])
    case("rt_clip_const_lo", [helper.make_node("Clip", ["x", "c", "hi"], ["y"])],
         [("x", F), ("hi", F)], [x4, np.array(hi)], [("y", F)],
         [np.minimum(np.maximum(x4, np.float32(-0.1)), hi)], [c("c", np.float32(-0.1))])
    # bounds onto a computed 4-D tensor (its rank unknown before inference):
    # the broadcast's lowering lays the scalars out as 4-D
    case("rt_clip_computed_4d", [helper.make_node("Neg", ["x"], ["n"]),
                                 helper.make_node("Clip", ["n", "lo", "hi"], ["y"])],
         [("x", F), ("lo", F), ("hi", F)], [x4, np.array(lo), np.array(hi)],
         [("y", F)], [np.clip(-x4, lo, hi)])
    # Pad's constant value at run time (4-D)
    pads = np.array([0, 1, 2, 0, 0, 0, 1, 3], np.int64)
    case("rt_pad_value", [helper.make_node("Pad", ["x", "pads", "v"], ["y"])],
         [("x", F), ("v", F)], [x4, np.array(np.float32(1.5))], [("y", F)],
         [np.pad(x4, ((0, 0), (1, 0), (2, 1), (0, 3)), constant_values=1.5)],
         [c("pads", pads)])
    # LayerNormalization with Scale and B at run time (3-D, the last axis)
    x3 = rng.standard_normal((2, 6, 40)).astype(np.float32)
    sc = rng.uniform(0.5, 1.5, 40).astype(np.float32)
    bi = rng.uniform(-1, 1, 40).astype(np.float32)
    mu = x3.mean(-1, keepdims=True)
    ln = (x3 - mu) / np.sqrt(((x3 - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * sc + bi
    case("rt_layernorm", [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"],
                                           axis=-1)],
         [("x", F), ("s", F), ("b", F)], [x3, sc, bi], [("y", F)], [ln.astype(np.float32)],
         opset=17)
    # DequantizeLinear per tensor and QuantizeLinear per axis, run-time
    # scales (values on a grid: x / s exact in fp16, never a tie)
    q8 = rng.integers(0, 256, (3, 8)).astype(np.uint8)
    case("rt_dequant", [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
         [("q", U8), ("s", F)], [q8, np.array(np.float32(0.25))], [("y", F)],
         [((q8.astype(np.float32) - 100) * 0.25).astype(np.float32)],
         [c("z", np.uint8(100))])
    xq = (rng.integers(-200, 200, (2, 3, 4, 5)) / 8.0 + 1 / 32).astype(np.float32)
    sq = np.array([0.5, 0.25, 1.0, 2.0, 0.125], np.float32)
    zq = np.array([0, -3, 5, 10, -20], np.int8)
    case("rt_quant_axis", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=-1)],
         [("x", F), ("s", F)], [xq, sq], [("y", I8)],
         [np.clip(np.rint(xq / sq) + zq, -128, 127).astype(np.int8)], [c("z", zq)])
    # Einsum: a sum and a transpose of one operand, a diagonal under an ellipsis
    xe = rng.standard_normal((2, 3, 4)).astype(np.float32)
    case("einsum_sum_transpose", [helper.make_node("Einsum", ["x"], ["y"], equation="bij->jb")],
         [("x", F)], [xe], [("y", F)], [np.einsum("bij->jb", xe)], opset=12)
    xd = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    case("einsum_diagonal", [helper.make_node("Einsum", ["x"], ["y"],
                                              equation="...ii->...i")],
         [("x", F)], [xd], [("y", F)], [np.einsum("...ii->...i", xd)], opset=12)
    # BatchNormalization in training mode: y, running mean and variance
    s3 = rng.uniform(0.5, 1.5, 3).astype(np.float32)
    b3 = rng.uniform(-1, 1, 3).astype(np.float32)
    m3 = rng.uniform(-1, 1, 3).astype(np.float32)
    v3 = rng.uniform(0.5, 1.5, 3).astype(np.float32)
    bm = x4.mean((0, 2, 3))
    bv = x4.var((0, 2, 3))
    yb = ((x4 - bm.reshape(1, 3, 1, 1)) / np.sqrt(bv.reshape(1, 3, 1, 1) + 1e-5)
          * s3.reshape(1, 3, 1, 1) + b3.reshape(1, 3, 1, 1))
    case("bn_training", [helper.make_node("BatchNormalization",
                                          ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                                          training_mode=1, momentum=0.8)],
         [("x", F), ("s", F), ("b", F), ("m", F), ("v", F)], [x4, s3, b3, m3, v3],
         [("y", F), ("rm", F), ("rv", F)],
         [yb.astype(np.float32), (m3 * 0.8 + bm * 0.2).astype(np.float32),
          (v3 * 0.8 + bv * 0.2).astype(np.float32)], opset=15)


if __name__ == "__main__":
    main()
