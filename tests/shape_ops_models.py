#!/usr/bin/env python3
"""Models and reference data for tests/check_shape_ops.c: the variants of
LogSoftmax/Softmax, Slice, Split, Concat, Pad and Resize that the ONNX node
tests do not reach (opset 11's coercion to 2-D, the channels of a 4-D
tensor, rows over 128, steps along the lanes, NC1HWC0 channel slices,
splits and concats at any channel, Pad along the lane axis in every mode,
past the axis, negative and on integers, Resize cubic on torch's bicubic).
Each model NAME.onnx comes with NAME/input_0.pb and NAME/output_N.pb (the
reference: numpy; PyTorch for Resize cubic).
usage: shape_ops_models.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from onnx_case import save_case

out = sys.argv[1]
rng = np.random.default_rng(7)


def save(name, nodes, x, y, opset=13, inits=()):
    save_case(out, name, nodes, [("x", x)], y, inits, opset)


def ints(name, v):
    return numpy_helper.from_array(np.array(v, dtype=np.int64), name)


def softmax_ref(x, axes, log):
    m = x.max(axis=axes, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=axes, keepdims=True)
    return (x - m - np.log(s)) if log else e / s


def data(*shape, scale=1.0):
    # fp16-representable inputs, so that the reference sees what the device does
    return (rng.standard_normal(shape) * scale).astype(np.float16).astype(np.float32)


# Softmax / LogSoftmax
for op, log in (("Softmax", False), ("LogSoftmax", True)):
    low = op.lower()
    # opset 11: coerced to 2-D at axis, one softmax over all trailing axes
    x = data(2, 3, 4, 5)
    save(low + "_opset11_axis1_4d", [helper.make_node(op, ["x"], ["y"], axis=1)], x,
         softmax_ref(x, (1, 2, 3), log), opset=11)
    x = data(3, 4, 20)
    save(low + "_opset11_axis0_3d", [helper.make_node(op, ["x"], ["y"], axis=0)], x,
         softmax_ref(x, (0, 1, 2), log), opset=11)
    # opset 13 over the channels of a 4-D tensor (NC1HWC0 lanes)
    x = data(2, 20, 3, 5)
    save(low + "_channels_4d", [helper.make_node(op, ["x"], ["y"], axis=1)], x,
         softmax_ref(x, (1,), log))
    # rows over 128 (the general kernel) and a middle axis of an ND tensor,
    # with a spread that makes exp(x - max) underflow in fp16: LogSoftmax
    # must not take the log of those zeros
    x = data(4, 300, scale=8.0)
    save(low + "_rows300", [helper.make_node(op, ["x"], ["y"], axis=-1)], x,
         softmax_ref(x, (1,), log))
    x = data(3, 7, 20, scale=8.0)
    save(low + "_mid_axis", [helper.make_node(op, ["x"], ["y"], axis=1)], x,
         softmax_ref(x, (1,), log))
    x = data(5, 40, scale=8.0)
    save(low + "_rows40_spread", [helper.make_node(op, ["x"], ["y"], axis=-1)], x,
         softmax_ref(x, (1,), log))


def slice_model(name, x, starts, ends, axes, steps):
    inits = [ints("s", starts), ints("e", ends), ints("a", axes), ints("p", steps)]
    sl = [slice(None)] * x.ndim
    for s, e, a, p in zip(starts, ends, axes, steps):
        sl[a] = slice(s, e, p)
    save(name, [helper.make_node("Slice", ["x", "s", "e", "a", "p"], ["y"])], x,
         x[tuple(sl)], inits=inits)


# Slice with steps: along the lanes (positive, negative, over 255 blocks
# apart), along leading axes (negative strides), NC1HWC0 channels
slice_model("slice_last_step3", data(6, 40), [1, 3], [6, 37], [0, 1], [2, 3])
slice_model("slice_last_neg5", data(5, 40), [-1, -1], [-100, -100], [0, 1], [-1, -5])
slice_model("slice_last_step290", data(3, 600), [0], [600], [1], [290])
slice_model("slice_last_neg1_3d", data(2, 3, 19), [17], [0], [2], [-1])
slice_model("slice_lead_steps", data(7, 5, 32), [6, 0, 16], [0, 5, 32], [0, 1, 2], [-2, 2, 1])
slice_model("slice_channels_step", data(2, 40, 5, 6), [3, 4, 1], [37, -100, 5],
            [1, 2, 3], [2, -1, 1])
slice_model("slice_channels_start5", data(2, 40, 3, 4), [5], [29], [1], [1])

# Split along NC1HWC0 channels at starts that are not multiples of 16
x = data(2, 40, 3, 3)
g = helper.make_graph(
    [helper.make_node("Split", ["x", "sp"], ["y0", "y1", "y2"], axis=1)], "split",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
    [helper.make_tensor_value_info("y%d" % k, TensorProto.FLOAT, [2, c, 3, 3])
     for k, c in enumerate((5, 20, 15))],
    initializer=[ints("sp", [5, 20, 15])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.save(m, os.path.join(out, "split_channels_4d.onnx"))
d = os.path.join(out, "split_channels_4d")
os.makedirs(d, exist_ok=True)
onnx.save_tensor(numpy_helper.from_array(x, "x"), os.path.join(d, "input_0.pb"))
for k, (a, b) in enumerate(((0, 5), (5, 25), (25, 40))):
    onnx.save_tensor(numpy_helper.from_array(np.ascontiguousarray(x[:, a:b]), "y%d" % k),
                     os.path.join(d, "output_%d.pb" % k))


# Concat along NC1HWC0 channels of inputs that are not whole blocks: the
# parts of a Split, reordered, and a Relu'd one in between
x = data(2, 40, 3, 4)
save("concat_channels_4d",
     [helper.make_node("Split", ["x", "sp"], ["a", "b", "c"], axis=1),
      helper.make_node("Relu", ["b"], ["rb"]),
      helper.make_node("Concat", ["c", "a", "rb", "a"], ["y"], axis=1)], x,
     np.concatenate([x[:, 25:], x[:, :5], np.maximum(x[:, 5:25], 0), x[:, :5]], axis=1),
     inits=[ints("sp", [5, 20, 15])])


def pad_model(name, x, pads, mode, value=0.0):
    r = x.ndim
    inits = [ints("p", pads), numpy_helper.from_array(np.array(value, np.float32), "v")]
    # negative pads crop first (as ONNX Runtime does), then np.pad
    crop = tuple(slice(max(-pads[i], 0), x.shape[i] - max(-pads[i + r], 0)) for i in range(r))
    width = [(max(pads[i], 0), max(pads[i + r], 0)) for i in range(r)]
    y = (np.pad(x[crop], width, mode="constant", constant_values=value) if mode == "constant"
         else np.pad(x[crop], width, mode={"reflect": "reflect", "edge": "edge"}[mode]))
    save(name, [helper.make_node("Pad", ["x", "p", "v"], ["y"], mode=mode)], x, y,
         inits=inits)


# Pad along the lanes: ND's last axis, NC1HWC0's channels; every mode
pad_model("pad_last_constant", data(3, 5, 20), [1, 0, 2, 0, 0, 13], "constant", 1.5)
pad_model("pad_last_reflect", data(4, 30), [0, 3, 0, 5], "reflect")
pad_model("pad_last_edge", data(4, 30), [2, 17, 1, 2], "edge")
pad_model("pad_channels_constant", data(1, 20, 3, 4), [0, 3, 1, 0, 0, 5, 1, 0],
          "constant", 0.5)
pad_model("pad_channels_reflect", data(2, 6, 3, 4), [0, 2, 0, 1, 0, 3, 0, 1], "reflect")
pad_model("pad_channels_edge", data(2, 17, 2, 3), [0, 16, 0, 0, 0, 1, 0, 0], "edge")
# reflect pads as large as the axis or larger (numpy reflects again and
# again), and negative pads (cropping), alone or with padding
pad_model("pad_reflect_large", data(3, 4), [2, 9, 4, 6], "reflect")
pad_model("pad_reflect_large_4d", data(1, 3, 2, 3), [0, 0, 3, 5, 0, 4, 2, 7], "reflect")
pad_model("pad_crop_last", data(4, 30), [0, -3, -1, -5], "constant")
pad_model("pad_crop_and_pad_4d", data(2, 20, 5, 6), [0, -2, 1, -1, 0, 3, -2, 2], "edge", 0.0)
# Pad of an integer tensor (data movement: its values are fp16 on the
# device), with an integer constant_value, then Cast to float for the output
xi = rng.integers(-50, 50, size=(2, 3, 5)).astype(np.int32)
g = helper.make_graph(
    [helper.make_node("Pad", ["x", "p", "v"], ["t"], mode="constant"),
     helper.make_node("Cast", ["t"], ["y"], to=TensorProto.FLOAT)], "padint",
    [helper.make_tensor_value_info("x", TensorProto.INT32, list(xi.shape))],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 3, 9])],
    initializer=[ints("p", [1, 0, 3, 0, 0, 1]),
                 numpy_helper.from_array(np.array(7, np.int32), "v")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "pad_int32_constant.onnx"))
d = os.path.join(out, "pad_int32_constant")
os.makedirs(d, exist_ok=True)
onnx.save_tensor(numpy_helper.from_array(xi, "x"), os.path.join(d, "input_0.pb"))
onnx.save_tensor(numpy_helper.from_array(
    np.pad(xi, [(1, 0), (0, 0), (3, 1)], constant_values=7).astype(np.float32), "y"),
    os.path.join(d, "output_0.pb"))

# Resize with tf_crop_and_resize (a crop box partly outside the image: the
# extrapolation value there, in the real channels), and cubic with
# exclude_outside, on 20 channels (two blocks), against ONNX's own
# reference implementation (onnx.backend.test.case.node.resize)
from onnx.backend.test.case.node.resize import cubic_coeffs, interpolate_nd, linear_coeffs
for name, mode, ctm, sizes, roi, extra in (
        ("resize_crop_linear", "linear", "tf_crop_and_resize", [1, 20, 4, 7],
         [0, 0, -0.2, 0.3, 1, 1, 0.9, 1.4], dict(extrapolation_value=-2.0)),
        ("resize_crop_cubic", "cubic", "tf_crop_and_resize", [2, 20, 5, 3],
         [0, 0, 0.1, -0.5, 1, 1, 0.8, 0.7], dict(extrapolation_value=3.0)),
        ("resize_cubic_exclude", "cubic", "half_pixel", [1, 20, 7, 9], None,
         dict(exclude_outside=1, cubic_coeff_a=-0.5))):
    x = data(sizes[0], 20, 5, 6)
    inputs = ["x", "roi" if roi else "", "", "sz"]
    inits = [ints("sz", sizes)]
    if roi:
        inits.append(numpy_helper.from_array(np.array(roi, np.float32), "roi"))
    node = helper.make_node("Resize", inputs, ["y"], mode=mode,
                            coordinate_transformation_mode=ctm, **extra)
    a = extra.get("cubic_coeff_a", -0.75)
    coeffs = ((lambda r: linear_coeffs(r)) if mode == "linear"
              else (lambda r: cubic_coeffs(r, A=a)))
    kw = dict(coordinate_transformation_mode=ctm,
              exclude_outside=bool(extra.get("exclude_outside", 0)))
    if "extrapolation_value" in extra:
        kw["extrapolation_value"] = extra["extrapolation_value"]
    y = interpolate_nd(x, coeffs, output_size=sizes,
                       roi=np.array(roi, np.float32) if roi else None, **kw)
    save(name, [node], x, y.astype(np.float32), inits=inits)

# Resize cubic as torch computes it (Keys a = -0.75, edge-clamped
# neighbours), exported at opset 13: more than one channel block, a batch
for name, shape, kw in (("resize_cubic_torch", (2, 20, 5, 7),
                         dict(scale_factor=2.0, align_corners=False)),
                        ("resize_cubic_torch_align", (1, 3, 6, 4),
                         dict(size=(9, 10), align_corners=True)),
                        ("resize_cubic_torch_down", (1, 17, 9, 8),
                         dict(scale_factor=0.5, align_corners=False))):
    mod = torch.nn.Upsample(mode="bicubic", **kw)
    x = torch.from_numpy(data(*shape))
    with torch.no_grad():
        y = mod(x)
    torch.onnx.export(mod, x, os.path.join(out, name + ".onnx"), input_names=["x"],
                      output_names=["y"], opset_version=13)
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    onnx.save_tensor(numpy_helper.from_array(x.numpy(), "x"), os.path.join(d, "input_0.pb"))
    onnx.save_tensor(numpy_helper.from_array(y.numpy(), "y"), os.path.join(d, "output_0.pb"))
# reductions of 4-D (NC1HWC0) tensors and over axes that are not adjacent
# (a permute first): spatial mean, channel sum, non-adjacent max/min
for name, op, shape, axes, keep in (
        ("reduce_mean_hw_4d", "ReduceMean", (2, 40, 7, 9), [2, 3], 1),
        ("reduce_sum_c_4d", "ReduceSum", (2, 37, 5, 6), [1], 0),
        ("reduce_max_nh_4d", "ReduceMax", (3, 20, 6, 5), [0, 2], 1),
        ("reduce_min_02_3d", "ReduceMin", (5, 6, 33), [0, 2], 0),
        ("reduce_mean_134_5d", "ReduceMean", (2, 3, 4, 5, 18), [1, 3, 4], 1)):
    x = data(*shape)
    fn = {"ReduceMean": np.mean, "ReduceSum": np.sum, "ReduceMax": np.max,
          "ReduceMin": np.min}[op]
    y = fn(x.astype(np.float64), axis=tuple(axes), keepdims=bool(keep))
    if op == "ReduceSum":  # opset 13: axes as an input
        node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=keep)
        save(name, [node], x, y.astype(np.float32), inits=[ints("axes", axes)])
    else:
        node = helper.make_node(op, ["x"], ["y"], axes=axes, keepdims=keep)
        save(name, [node], x, y.astype(np.float32))

# empty tensors: a Slice that keeps nothing feeds a Concat (which skips it)
# and an unused element-wise op (which runs no kernel)
x = data(2, 19)
save("concat_empty", [helper.make_node("Slice", ["x", "s", "e"], ["t"]),
                      helper.make_node("Sigmoid", ["t"], ["u"]),
                      helper.make_node("Concat", ["t", "x", "u"], ["y"], axis=0)],
     x, x, inits=[ints("s", [5]), ints("e", [7])])
# Einsum in the batched-matmul forms attention writes (MaxViT): [i d]x[j d]
# and [i j]x[j d] over leading batch letters
x = data(2, 3, 20, 24)
k = data(2, 3, 17, 24).astype(np.float32)
save("einsum_qk", [helper.make_node("Einsum", ["x", "k"], ["y"],
                                    equation="bghid, bghjd -> bghij")],
     x, np.einsum("bhid,bhjd->bhij", x, k).astype(np.float32),
     inits=[numpy_helper.from_array(k, "k")])
v = data(2, 3, 20, 9)
save("einsum_av", [helper.make_node("Einsum", ["x", "v"], ["y"], equation="BGIJ,BGJD->BGID")],
     x[..., :20], np.einsum("bgij,bgjd->bgid", x[..., :20], v).astype(np.float32),
     inits=[numpy_helper.from_array(v, "v")])

# ReduceL2 / ReduceSumSquare / ReduceL1 (pass_decompose.c) and F.normalize:
# x / max(||x||, 1e-12) with all-zero rows (Swin v2's padded windows): 0, not NaN
x = data(4, 6, 40)
x[1, 2, :] = 0
x[3, 5, :] = 0
xd = x.astype(np.float64)
l2 = np.sqrt((xd * xd).sum(axis=-1, keepdims=True))
save("normalize_zero_rows", [
    helper.make_node("ReduceL2", ["x"], ["n"], axes=[-1], keepdims=1),
    helper.make_node("Clip", ["n", "eps", ""], ["c"]),
    helper.make_node("Div", ["x", "c"], ["y"])],
    x, (xd / np.maximum(l2, 1e-12)).astype(np.float32),
    inits=[numpy_helper.from_array(np.array(1e-12, np.float32), "eps")])
save("reduce_sumsquare_l1", [
    helper.make_node("ReduceSumSquare", ["x"], ["a"], axes=[1], keepdims=0),
    helper.make_node("ReduceL1", ["x"], ["b"], axes=[1], keepdims=0),
    helper.make_node("Add", ["a", "b"], ["y"])],
    x, ((xd * xd).sum(axis=1) + np.abs(xd).sum(axis=1)).astype(np.float32))

# a shifted-window attention mask as Swin builds it, from shapes and
# constants only (fold_eval.c): zeros(...), slice assignments (ScatterND),
# Equal/Where, Expand; added to x as a 4-D constant (NC1HWC0 weights)
x = data(1, 4, 6, 6)
idx = np.array([[[i, j] for j in range(3, 6)] for i in range(0, 6)], dtype=np.int64)
upd = np.full((6, 3), 2.0, np.float32)
shape = np.array([1, 4, 6, 6], np.int64)
mask = np.zeros((6, 6), np.float32)
mask[:, 3:] = 2.0
mref = np.where(mask != 0, -100.0, 0.0).astype(np.float32)
save("folded_window_mask", [
    helper.make_node("ConstantOfShape", ["hw"], ["z"],
                     value=numpy_helper.from_array(np.array([0.0], np.float32))),
    helper.make_node("ScatterND", ["z", "idx", "upd"], ["m"]),
    helper.make_node("Equal", ["m", "zero"], ["eq"]),
    helper.make_node("Where", ["eq", "zero", "neg"], ["w"]),
    helper.make_node("Expand", ["w", "shape"], ["e"]),
    helper.make_node("Mod", ["seven", "four"], ["md"]),
    helper.make_node("Cast", ["md"], ["mdf"], to=TensorProto.FLOAT),
    helper.make_node("Mul", ["e", "mdf"], ["e3"]),
    helper.make_node("Add", ["x", "e3"], ["y"])],
    x, (x + np.broadcast_to(mref, (1, 4, 6, 6)) * float(np.mod(-7, 4))).astype(np.float32),
    inits=[ints("hw", [6, 6]), ints("idx", idx), numpy_helper.from_array(upd, "upd"),
           numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
           numpy_helper.from_array(np.array(-100.0, np.float32), "neg"),
           ints("shape", shape), ints("seven", [-7]), ints("four", [4])])
print("ok")
