#!/usr/bin/env python3
"""Models and numpy references for tests/check_dtypes.c: integer and bool
tensors at the graph's edges, comparisons, logic, Where and Cast.  Each
model NAME.onnx comes with NAME/input_N.pb and NAME/output_N.pb.
usage: dtype_models.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as P, helper as h, numpy_helper as nh


def write(out, name, inputs, outputs):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    for k, a in enumerate(inputs):
        onnx.save_tensor(nh.from_array(a), os.path.join(d, "input_%d.pb" % k))
    for k, a in enumerate(outputs):
        onnx.save_tensor(nh.from_array(a), os.path.join(d, "output_%d.pb" % k))


def save(out, name, nodes, ins, outs, inits=()):
    g = h.make_graph(nodes, name, ins, outs, list(inits))
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]),
              os.path.join(out, name + ".onnx"))


def vi(name, t, shape):
    return h.make_tensor_value_info(name, t, shape)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attn_mask(out, rng, name, rank4):
    """BERT's extended attention mask: int64 [B, S] -> float -> (1 - m) * -10000
    -> unsqueezed -> added to the scores -> Softmax."""
    B, H, S = 2, 3, 20
    shape = [B, H, S, S] if rank4 else [B, S, S]
    axes = [1, 2] if rank4 else [1]
    c = [nh.from_array(np.array(1, np.float32), "one"),
         nh.from_array(np.array(-10000, np.float32), "big"),
         nh.from_array(np.array(axes, np.int64), "axes")]
    nodes = [h.make_node("Cast", ["mask"], ["mf"], to=P.FLOAT),
             h.make_node("Sub", ["one", "mf"], ["inv"]),
             h.make_node("Mul", ["inv", "big"], ["add"]),
             h.make_node("Unsqueeze", ["add", "axes"], ["ext"]),
             h.make_node("Add", ["scores", "ext"], ["s"]),
             h.make_node("Softmax", ["s"], ["p"], axis=-1)]
    save(out, name, nodes, [vi("scores", P.FLOAT, shape), vi("mask", P.INT64, [B, S])],
         [vi("p", P.FLOAT, shape)], c)
    scores = rng.standard_normal(shape).astype(np.float32)
    mask = np.ones((B, S), np.int64)
    mask[0, 13:] = 0
    mask[1, 5:] = 0
    ext = ((1 - mask.astype(np.float32)) * -10000).reshape([B] + [1] * len(axes) + [S])
    write(out, name, [scores, mask], [softmax(scores + ext).astype(np.float32)])


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    attn_mask(out, rng, "attn_mask", False)
    attn_mask(out, rng, "attn_mask4", True)

    # comparisons, logic, Where and Cast with bool and integer outputs
    R, C = 3, 20
    c = [nh.from_array(np.array(50, np.float32), "k50"),
         nh.from_array(np.array(100, np.float32), "k100"),
         nh.from_array(np.array(0, np.float32), "zero")]
    nodes = [h.make_node("Greater", ["x", "y"], ["gt"]),
             h.make_node("Not", ["gt"], ["nt"]),
             h.make_node("Less", ["x", "zero"], ["neg"]),
             h.make_node("Xor", ["gt", "neg"], ["xr"]),
             h.make_node("Where", ["gt", "x", "y"], ["wh"]),
             h.make_node("Mul", ["x", "k50"], ["x50"]),
             h.make_node("Cast", ["x50"], ["ci"], to=P.INT32),
             h.make_node("Mul", ["x", "k100"], ["x100"]),
             h.make_node("Cast", ["x100"], ["c8"], to=P.INT8),
             h.make_node("Cast", ["x50"], ["c64"], to=P.INT64),
             h.make_node("Cast", ["x"], ["cb"], to=P.BOOL)]
    save(out, "logic", nodes, [vi("x", P.FLOAT, [R, C]), vi("y", P.FLOAT, [C])],
         [vi("gt", P.BOOL, [R, C]), vi("nt", P.BOOL, [R, C]), vi("xr", P.BOOL, [R, C]),
          vi("wh", P.FLOAT, [R, C]), vi("ci", P.INT32, [R, C]), vi("c8", P.INT8, [R, C]),
          vi("c64", P.INT64, [R, C]), vi("cb", P.BOOL, [R, C])], c)
    x = (rng.standard_normal((R, C)) * 2).astype(np.float32)
    x[0, :4] = [0, -0.0, 1.5, -1.5]
    y = rng.standard_normal(C).astype(np.float32)
    gt = x > y
    # the device multiplies in fp16, then truncates toward zero
    x50 = (x.astype(np.float16) * np.float16(50)).astype(np.float32)
    x100 = (x.astype(np.float16) * np.float16(100)).astype(np.float32)
    write(out, "logic", [x, y],
          [gt, ~gt, gt ^ (x < 0), np.where(gt, x, y).astype(np.float32),
           np.trunc(x50).astype(np.int32), np.clip(np.trunc(x100), -128, 127).astype(np.int8),
           np.trunc(x50).astype(np.int64), x != 0])

    # integer and bool inputs: int32 Equal with broadcasting, bool And/Or/Not,
    # uint8 and int8 to float, an int64 output with negatives
    nodes = [h.make_node("Equal", ["a", "b"], ["eq"]),
             h.make_node("Not", ["p"], ["np_"]),
             h.make_node("And", ["p", "q"], ["an"]),
             h.make_node("Or", ["p", "q"], ["orr"]),
             h.make_node("Cast", ["u"], ["uf"], to=P.FLOAT),
             h.make_node("Cast", ["s"], ["sf"], to=P.FLOAT),
             h.make_node("Add", ["uf", "sf"], ["us"]),
             h.make_node("Cast", ["a"], ["a64"], to=P.INT64),
             h.make_node("Identity", ["a64"], ["ao"])]
    save(out, "edges", nodes,
         [vi("a", P.INT32, [2, 3, 17]), vi("b", P.INT32, [3, 1]), vi("p", P.BOOL, [5, 33]),
          vi("q", P.BOOL, [33]), vi("u", P.UINT8, [4, 9]), vi("s", P.INT8, [4, 9])],
         [vi("eq", P.BOOL, [2, 3, 17]), vi("np_", P.BOOL, [5, 33]), vi("an", P.BOOL, [5, 33]),
          vi("orr", P.BOOL, [5, 33]), vi("us", P.FLOAT, [4, 9]), vi("ao", P.INT64, [2, 3, 17])])
    a = rng.integers(-2048, 2049, (2, 3, 17)).astype(np.int32)
    a[0, 0, :3] = [-1, 0, 2048]
    b = rng.integers(-3, 3, (3, 1)).astype(np.int32)
    a[1, 2, 5] = b[2, 0]
    a[0, 1, 1] = b[1, 0]
    p = rng.integers(0, 2, (5, 33)).astype(bool)
    q = rng.integers(0, 2, 33).astype(bool)
    u = rng.integers(0, 256, (4, 9)).astype(np.uint8)
    s = rng.integers(-128, 128, (4, 9)).astype(np.int8)
    write(out, "edges", [a, b, p, q, u, s],
          [a == b, ~p, p & q, p | q, u.astype(np.float32) + s.astype(np.float32),
           a.astype(np.int64)])

    # several tiles of the int64 edge (512 values each), both directions
    nodes = [h.make_node("Cast", ["i"], ["f"], to=P.FLOAT),
             h.make_node("Neg", ["f"], ["nf"]),
             h.make_node("Cast", ["nf"], ["o"], to=P.INT64)]
    save(out, "wide", nodes, [vi("i", P.INT64, [3, 700])],
         [vi("nf", P.FLOAT, [3, 700]), vi("o", P.INT64, [3, 700])])
    i = rng.integers(-2048, 2049, (3, 700)).astype(np.int64)
    write(out, "wide", [i], [-i.astype(np.float32), -i])

    # integer arithmetic wraps as the type does: uint8 (b broadcast over
    # rows, zeros kept out of the divisor), int8, a constant scalar operand
    u8, i8 = P.UINT8, P.INT8
    nodes = [h.make_node("Add", ["a", "b"], ["s"]), h.make_node("Sub", ["a", "b"], ["d"]),
             h.make_node("Mul", ["a", "b"], ["m"]), h.make_node("Div", ["a", "b"], ["q"]),
             h.make_node("Add", ["c", "e"], ["cs"]), h.make_node("Sub", ["c", "e"], ["cd"]),
             h.make_node("Mul", ["c", "e"], ["cm"]), h.make_node("Mul", ["c", "three"], ["c3"])]
    save(out, "int_arith8", nodes,
         [vi("a", u8, [3, 700]), vi("b", u8, [700]), vi("c", i8, [3, 700]),
          vi("e", i8, [3, 700])],
         [vi(n, t, [3, 700]) for n, t in (("s", u8), ("d", u8), ("m", u8), ("q", u8),
                                          ("cs", i8), ("cd", i8), ("cm", i8), ("c3", i8))],
         [nh.from_array(np.array(3, np.int8), "three")])
    a = rng.integers(0, 256, (3, 700)).astype(np.uint8)
    b = rng.integers(1, 256, 700).astype(np.uint8)
    c = rng.integers(-128, 128, (3, 700)).astype(np.int8)
    e = rng.integers(-128, 128, (3, 700)).astype(np.int8)
    with np.errstate(over="ignore"):
        write(out, "int_arith8", [a, b, c, e],
              [a + b, a - b, a * b, a // b, c + e, c - e, c * e, c * np.int8(3)])
    # int32 and int64 division toward zero (as C, ONNX Runtime), products,
    # a broadcast sum; Max/Min/Clip choose integer values
    i32 = P.INT32
    nodes = [h.make_node("Div", ["f", "g"], ["fq"]), h.make_node("Mul", ["f", "g"], ["fm"]),
             h.make_node("Add", ["f", "r"], ["fa"]), h.make_node("Div", ["k", "l"], ["kq"]),
             h.make_node("Max", ["c", "e"], ["mx"]), h.make_node("Min", ["c", "e"], ["mn"]),
             h.make_node("Clip", ["c", "lo", "hi"], ["cl"])]
    save(out, "int_arith32", nodes,
         [vi("f", i32, [5, 40]), vi("g", i32, [5, 40]), vi("r", i32, [40]),
          vi("k", P.INT64, [7, 9]), vi("l", P.INT64, [7, 9]), vi("c", i8, [3, 700]),
          vi("e", i8, [3, 700])],
         [vi("fq", i32, [5, 40]), vi("fm", i32, [5, 40]), vi("fa", i32, [5, 40]),
          vi("kq", P.INT64, [7, 9]), vi("mx", i8, [3, 700]), vi("mn", i8, [3, 700]),
          vi("cl", i8, [3, 700])],
         [nh.from_array(np.array(-5, np.int8), "lo"), nh.from_array(np.array(7, np.int8), "hi")])
    f = rng.integers(-40, 41, (5, 40)).astype(np.int32)
    g = rng.integers(1, 41, (5, 40)).astype(np.int32) * rng.choice([-1, 1], (5, 40)).astype(np.int32)
    r = rng.integers(-1000, 1001, 40).astype(np.int32)
    k = rng.integers(-2000, 2001, (7, 9)).astype(np.int64)
    l = rng.integers(1, 60, (7, 9)).astype(np.int64) * rng.choice([-1, 1], (7, 9))
    trunc = lambda x, y: (np.abs(x) // np.abs(y)) * np.sign(x) * np.sign(y)
    write(out, "int_arith32", [f, g, r, k, l, c, e],
          [trunc(f, g).astype(np.int32), f * g, f + r, trunc(k, l).astype(np.int64),
           np.maximum(c, e), np.minimum(c, e), np.clip(c, -5, 7).astype(np.int8)])

    # Pow with tensor exponents (C's pow): negative bases with integer and
    # non-integer exponents (NaN), 0 ** 0 = 1, 0 ** -1 = inf, a broadcast
    # row of exponents; an int32 base and exponent (an integer result)
    nodes = [h.make_node("Pow", ["px", "py"], ["pz"]),
             h.make_node("Pow", ["pi", "pj"], ["pk"]),
             h.make_node("Pow", ["px", "pl"], ["pm"])]
    save(out, "pow_any", nodes,
         [vi("px", P.FLOAT, [6, 300]), vi("py", P.FLOAT, [300]), vi("pi", i32, [5, 40]),
          vi("pj", i32, [40]), vi("pl", P.INT64, [6, 300])],
         [vi("pz", P.FLOAT, [6, 300]), vi("pk", i32, [5, 40]), vi("pm", P.FLOAT, [6, 300])])
    px = (rng.integers(-16, 17, (6, 300)) / 4.0).astype(np.float32)
    px[0, :5] = 0
    py = (rng.integers(-12, 13, 300) / 4.0).astype(np.float32)
    py[:3] = [0, -1, 2]
    pi = rng.integers(-6, 7, (5, 40)).astype(np.int32)
    pj = rng.integers(0, 4, 40).astype(np.int32)
    pl = rng.integers(-3, 4, (6, 300)).astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        write(out, "pow_any", [px, py, pi, pj, pl],
              [np.power(px, py), np.power(pi, pj).astype(np.int32),
               np.power(px.astype(np.float64), pl).astype(np.float32)])

    # types the device does not compute in, converted by the runtime at
    # the model's edge (om/om_edge.c): float64 as float32, int16,
    # uint16 and uint32 as int32, uint64 as int64; a Cast to float64 that
    # makes an output, and float64 arithmetic (in fp16 on the device)
    nodes = [h.make_node("Mul", ["d", "d"], ["dd"]),
             h.make_node("Cast", ["d"], ["df"], to=P.FLOAT),
             h.make_node("Cast", ["f"], ["fd"], to=P.DOUBLE),
             h.make_node("Min", ["s16", "s16"], ["m16"]),
             h.make_node("Max", ["u16", "u16"], ["x16"]),
             h.make_node("Max", ["u32", "u32"], ["x32"]),
             h.make_node("Min", ["u64", "u64"], ["m64"])]
    ins = [("d", P.DOUBLE, np.float64), ("f", P.FLOAT, np.float32),
           ("s16", P.INT16, np.int16), ("u16", P.UINT16, np.uint16),
           ("u32", P.UINT32, np.uint32), ("u64", P.UINT64, np.uint64)]
    save(out, "edge_types", nodes, [vi(n, t, [3, 7]) for n, t, _ in ins],
         [vi("dd", P.DOUBLE, [3, 7]), vi("df", P.FLOAT, [3, 7]), vi("fd", P.DOUBLE, [3, 7]),
          vi("m16", P.INT16, [3, 7]), vi("x16", P.UINT16, [3, 7]),
          vi("x32", P.UINT32, [3, 7]), vi("m64", P.UINT64, [3, 7])])
    v = {}
    for n, _, dt in ins:
        lo = -2000 if np.issubdtype(dt, np.signedinteger) else 0
        v[n] = (rng.integers(-40, 41, (3, 7)) / 8.0 if dt in (np.float64, np.float32)
                else rng.integers(lo, 2001, (3, 7))).astype(dt)
    write(out, "edge_types", [v[n] for n, _, _ in ins],
          [v["d"] * v["d"], v["d"].astype(np.float32), v["f"].astype(np.float64),
           v["s16"], v["u16"], v["u32"], v["u64"]])

    # complex64 has no device type nor an edge conversion: refused
    save(out, "complex_in", [h.make_node("Identity", ["c"], ["o"])],
         [vi("c", P.COMPLEX64, [4])], [vi("o", P.COMPLEX64, [4])])


if __name__ == "__main__":
    main()
