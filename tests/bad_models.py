"""bad_models.py OUT: broken ONNX models for tests/bad_inputs.sh, each of a
class a hostile or careless file could take (issue 20): names that do not
resolve, empty required inputs, attributes that disagree with the weights,
dimensions too large to exist, element counts that do not agree, an empty
graph, external data leaving the model's folder.  Writes OUT/NAME.onnx and
one line "NAME<TAB>needle" per model to stdout: the text simatc's error
must contain besides the file's name.  The models are built without
onnx.checker on purpose: most of them would fail it."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
F = TensorProto.FLOAT


def vi(name, shape, dt=F):
    return helper.make_tensor_value_info(name, dt, shape)


def save(name, needle, nodes, ins, outs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, ins, outs,
                          initializer=[numpy_helper.from_array(v, k) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.save(m, os.path.join(OUT, name + ".onnx"))
    print("%s\t%s" % (name, needle))


def w(*shape):
    return np.ones(shape, np.float32)


X4 = [vi("x", [1, 3, 8, 8])]
Y = [vi("y", None)]

# -- empty or unresolved inputs --------------------------------------------
save("relu_empty_in", "Relu", [helper.make_node("Relu", [""], ["y"], name="r")], X4, Y)
save("clip_empty_in", "Clip", [helper.make_node("Clip", ["", "", ""], ["y"], name="c")], X4, Y)
save("bn_empty_in", "BatchNormalization",
     [helper.make_node("BatchNormalization", ["x", "", "", "", ""], ["y"], name="bn")], X4, Y)
save("bn_empty_x", "BatchNormalization",
     [helper.make_node("BatchNormalization", ["", "s", "b", "m", "v"], ["y"], name="bn")], X4, Y,
     [("s", w(3)), ("b", w(3)), ("m", w(3)), ("v", w(3))])
save("add_unknown_in", "nowhere",
     [helper.make_node("Add", ["x", "nowhere"], ["y"], name="a")], X4, Y)
save("conv_empty_w", "Conv", [helper.make_node("Conv", ["x", ""], ["y"], name="cv")], X4, Y)
save("relu_no_inputs", "Relu", [helper.make_node("Relu", [], ["y"], name="r")], X4, Y)
save("matmul_one_input", "MatMul", [helper.make_node("MatMul", ["x"], ["y"], name="mm")], X4, Y)
save("gather_empty_idx", "Gather", [helper.make_node("Gather", ["x", ""], ["y"], name="g")],
     X4, Y)
save("reshape_empty_shape", "Reshape",
     [helper.make_node("Reshape", ["x", ""], ["y"], name="rs")], X4, Y)
save("cycle", "t2", [helper.make_node("Relu", ["t2"], ["t1"], name="a"),
                     helper.make_node("Relu", ["t1"], ["t2"], name="b"),
                     helper.make_node("Add", ["x", "t2"], ["y"], name="c")], X4, Y)
save("output_never_made", "y", [helper.make_node("Relu", ["x"], ["z"], name="r")], X4, Y)
save("two_producers", "t", [helper.make_node("Relu", ["x"], ["t"], name="a"),
                            helper.make_node("Relu", ["x"], ["t"], name="b"),
                            helper.make_node("Relu", ["t"], ["y"], name="c")], X4, Y)
# -- the empty graph ---------------------------------------------------------
save("empty_graph", "no nodes", [], X4, [vi("x", [1, 3, 8, 8])])
save("no_outputs", "no outputs", [helper.make_node("Relu", ["x"], ["y"], name="r")], X4, [])
# -- Conv attributes against the weights -----------------------------------
CW = [("w", w(4, 3, 3, 3))]
save("conv_pads3", "pads", [helper.make_node("Conv", ["x", "w"], ["y"], name="cv",
                                             pads=[1, 1, 1])], X4, Y, CW)
save("conv_pads_neg", "pads", [helper.make_node("Conv", ["x", "w"], ["y"], name="cv",
                                                pads=[-1, 0, 0, 0])], X4, Y, CW)
save("conv_kshape_mismatch", "kernel_shape",
     [helper.make_node("Conv", ["x", "w"], ["y"], name="cv", kernel_shape=[5, 5])], X4, Y, CW)
save("conv_kshape_len", "kernel_shape",
     [helper.make_node("Conv", ["x", "w"], ["y"], name="cv", kernel_shape=[3])], X4, Y, CW)
save("conv_strides0", "strides",
     [helper.make_node("Conv", ["x", "w"], ["y"], name="cv", strides=[0, 1])], X4, Y, CW)
save("conv_strides_len", "strides",
     [helper.make_node("Conv", ["x", "w"], ["y"], name="cv", strides=[1, 1, 1])], X4, Y, CW)
save("conv_dil0", "dilations",
     [helper.make_node("Conv", ["x", "w"], ["y"], name="cv", dilations=[0, 0])], X4, Y, CW)
save("conv_group0", "group",
     [helper.make_node("Conv", ["x", "w"], ["y"], name="cv", group=0)], X4, Y, CW)
save("conv_group_bad", "group",
     [helper.make_node("Conv", ["x", "w"], ["y"], name="cv", group=2)], X4, Y, CW)
save("conv_w_rank", "cv", [helper.make_node("Conv", ["x", "w"], ["y"], name="cv")], X4, Y,
     [("w", w(4, 3))])
save("conv_w_chan", "cv", [helper.make_node("Conv", ["x", "w"], ["y"], name="cv")], X4, Y,
     [("w", w(4, 5, 3, 3))])
save("conv_bias_len", "cv", [helper.make_node("Conv", ["x", "w", "b"], ["y"], name="cv")], X4, Y,
     CW + [("b", w(7))])
save("pool_pads3", "pads", [helper.make_node("MaxPool", ["x"], ["y"], name="mp",
                                             kernel_shape=[2, 2], pads=[0, 0, 0])], X4, Y)
save("pool_no_kshape", "kernel_shape", [helper.make_node("MaxPool", ["x"], ["y"], name="mp")],
     X4, Y)
save("pool_kshape0", "kernel_shape", [helper.make_node("AveragePool", ["x"], ["y"], name="ap",
                                                       kernel_shape=[0, 2])], X4, Y)
save("pool_strides0", "strides", [helper.make_node("MaxPool", ["x"], ["y"], name="mp",
                                                   kernel_shape=[2, 2], strides=[0, 1])], X4, Y)
# -- sizes -----------------------------------------------------------------
save("dim_2e62", "x", [helper.make_node("Relu", ["x"], ["y"], name="r")],
     [vi("x", [1, 2 ** 62])], Y)
save("dim_2e31", "x", [helper.make_node("Relu", ["x"], ["y"], name="r")],
     [vi("x", [2 ** 31, 1])], Y)
save("dims_overflow", "x", [helper.make_node("Relu", ["x"], ["y"], name="r")],
     [vi("x", [2 ** 40, 2 ** 40])], Y)
save("dim_neg", "x", [helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [1, -5])], Y)
save("dim_huge_4d", "x", [helper.make_node("Relu", ["x"], ["y"], name="r")],
     [vi("x", [64, 1024, 1024, 1024])], Y)
save("expand_huge", "Expand",
     [helper.make_node("Expand", ["x", "s"], ["y"], name="ex")], [vi("x", [1, 1])], Y,
     [("s", np.array([2 ** 20, 2 ** 20], np.int64))])
save("reshape_huge", "Reshape", [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
     [vi("x", [2, 4])], Y, [("s", np.array([2 ** 62, 4], np.int64))])
# -- element counts that disagree ------------------------------------------
save("reshape_count", "Reshape", [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
     [vi("x", [2, 4])], Y, [("s", np.array([3, 5], np.int64))])
save("reshape_two_minus1", "Reshape",
     [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")], [vi("x", [2, 4])], Y,
     [("s", np.array([-1, -1], np.int64))])
save("reshape_minus1_nodiv", "Reshape",
     [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")], [vi("x", [2, 4])], Y,
     [("s", np.array([3, -1], np.int64))])
save("reshape_neg", "Reshape", [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
     [vi("x", [2, 4])], Y, [("s", np.array([-2, -4], np.int64))])
save("matmul_k", "MatMul", [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
     [vi("x", [2, 4])], Y, [("w", w(5, 3))])
save("add_bcast", "Add", [helper.make_node("Add", ["x", "w"], ["y"], name="a")],
     [vi("x", [2, 4])], Y, [("w", w(3))])
save("concat_axis", "Concat", [helper.make_node("Concat", ["x", "x"], ["y"], name="cc",
                                                axis=5)], [vi("x", [2, 4])], Y)
save("softmax_axis", "Softmax", [helper.make_node("Softmax", ["x"], ["y"], name="sm",
                                                  axis=-7)], [vi("x", [2, 4])], Y)
save("transpose_perm", "perm", [helper.make_node("Transpose", ["x"], ["y"], name="tp",
                                                 perm=[0, 0])], [vi("x", [2, 4])], Y)
# -- Gather: constant indices out of range ---------------------------------
save("gather_oob", "indices", [helper.make_node("Gather", ["x", "i"], ["y"], name="g", axis=0)],
     [vi("x", [4, 8])], Y, [("i", np.array([0, 7], np.int64))])
save("gather_oob_neg", "indices",
     [helper.make_node("Gather", ["x", "i"], ["y"], name="g", axis=0)], [vi("x", [4, 8])], Y,
     [("i", np.array([-5], np.int64))])
# -- initializers whose bytes disagree with their shape --------------------
t = numpy_helper.from_array(w(4, 3, 3, 3), "w")
t.dims[0] = 40
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="cv")], "init_short",
                      X4, Y, initializer=[t])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.save(m, os.path.join(OUT, "init_short.onnx"))
print("init_short\tw")
# -- external data through a symlink, outside the folder -------------------
ext = os.path.join(OUT, "ext")
os.makedirs(ext, exist_ok=True)
secret = os.path.join(OUT, "secret.bin")
with open(secret, "wb") as f:
    f.write(np.arange(12, dtype=np.float32).tobytes())
link = os.path.join(ext, "link.bin")
if os.path.lexists(link):
    os.remove(link)
os.symlink(os.path.abspath(secret), link)
for nm, loc in (("ext_symlink", "link.bin"), ("ext_dotdot", "../secret.bin"),
                ("ext_abs", os.path.abspath(secret))):
    t = onnx.TensorProto()
    t.name = "w"
    t.data_type = F
    t.dims.extend([12])
    t.data_location = onnx.TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key = "location"
    e.value = loc
    g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="a")], nm,
                          [vi("x", [12])], [vi("y", [12])], initializer=[t])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, os.path.join(ext, nm + ".onnx"))
    print("ext/%s\tw" % nm)
# -- types at the model's edge (om/om_edge.c) --------------------------
# an output declared float64 that computes as int32: no edge conversion
save("edge_declared_mismatch", "output 'y' is declared float64 but computes as int32",
     [helper.make_node("Cast", ["x"], ["y"], name="c", to=TensorProto.INT32)],
     [vi("x", [4])], [vi("y", [4], TensorProto.DOUBLE)])
# a complex64 input: neither a device type nor an edge-converted one
save("edge_complex_input", "input 'x' is complex64",
     [helper.make_node("Relu", ["x"], ["y"], name="r")],
     [vi("x", [4], TensorProto.COMPLEX64)], [vi("y", [4], TensorProto.COMPLEX64)])
# Cast to float64 inside the graph (not an output): no device type
save("edge_cast_double_inside", "Cast to float64 is not supported yet",
     [helper.make_node("Cast", ["x"], ["d"], name="c", to=TensorProto.DOUBLE),
      helper.make_node("Relu", ["d"], ["y"], name="r")],
     [vi("x", [4])], [vi("y", [4], TensorProto.DOUBLE)])

# -- a valid model, for the .om corruptions and the run-time cases ---------
g = helper.make_graph(
    [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="cv", pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["c"], ["y"], name="r")], "good", X4,
    [vi("y", [1, 4, 8, 8])],
    initializer=[numpy_helper.from_array(np.linspace(-1, 1, 108, dtype=np.float32)
                                         .reshape(4, 3, 3, 3), "w"),
                 numpy_helper.from_array(np.full(4, 0.5, np.float32), "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
onnx.save(m, os.path.join(OUT, "good.onnx"))
os.makedirs(os.path.join(OUT, "good"), exist_ok=True)
onnx.save_tensor(numpy_helper.from_array(np.ones((1, 3, 8, 8), np.float32), "x"),
                 os.path.join(OUT, "good", "input_0.pb"))
# -- at the size limit (Ascend310: 2^27 elements a tensor) -----------------
# Valid models whose work is bounded by the SoC's limits, not by their sizes:
# each must compile, or be refused, well within the test's 60 s (issue 20).
# Written to OUT/limit/, not listed: bad_inputs.sh runs them its own way.
lim = os.path.join(OUT, "limit")
os.makedirs(lim, exist_ok=True)


def limit(name, node, ins, inits=()):
    g = helper.make_graph([node], name, ins, [vi("y", None)],
                          initializer=[numpy_helper.from_array(v, k) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, os.path.join(lim, name + ".onnx"))


# a sliding window whose unrolled code is far beyond the loop builder's budget
limit("maxpool_limit", helper.make_node("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[3, 3],
                                        pads=[1, 1, 1, 1]), [vi("x", [1, 1, 8192, 16384])])
# a generator that emits its kernel straight: stops at the instruction bound
limit("transpose_limit", helper.make_node("Transpose", ["x"], ["y"], name="tr", perm=[1, 0]),
      [vi("x", [1 << 26, 2])])
# a MatMul at the limit: the tiling search's budget refuses it
limit("matmul_limit", helper.make_node("MatMul", ["x", "b"], ["y"], name="mm"),
      [vi("x", [8192, 16384]), vi("b", [16384, 8192])])
