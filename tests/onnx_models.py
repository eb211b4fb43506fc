#!/usr/bin/python3
"""Write the small ONNX models tests/check_onnx.c imports into the directory argv[1].

Built with onnx.helper so the files are what real exporters produce; each one exercises a
storage form or an error path of compiler/onnx_import.c that the ONNX backend node tests
(which carry no initializers) do not reach.  Deterministic: no random data, fixed names.
"""
import os
import struct
import sys

import onnx
from onnx import TensorProto, helper

OPSET = 13


def model(graph, check=True):
    m = helper.make_model(graph, producer_name="davinci-sim-tests",
                          opset_imports=[helper.make_opsetid("", OPSET)])
    if check:
        onnx.checker.check_model(m)
    return m


def external_model(location, offset, length):
    """Y = X + W with W (2x3 float) stored outside the model file."""
    w = TensorProto()
    w.name = "W"
    w.data_type = TensorProto.FLOAT
    w.dims.extend([2, 3])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = w.external_data.add()
        e.key = k
        e.value = v
    g = helper.make_graph(
        [helper.make_node("Add", ["X", "W"], ["Y"], name="add")], "external",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])],
        initializer=[w])
    # the checker would look for the data file; these models are checked by the importer
    return model(g, check=False)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def save(m, name):
        onnx.save(m, os.path.join(out, name))

    # weights.bin: 8 bytes of padding, then W = 0.5, 1.5, ... 5.5 (an offset that is not 0
    # tests that the importer seeks)
    with open(os.path.join(out, "weights.bin"), "wb") as f:
        f.write(b"\xde\xad\xbe\xef\xde\xad\xbe\xef")
        f.write(struct.pack("<6f", *[k + 0.5 for k in range(6)]))
    save(external_model("weights.bin", 8, 24), "external.onnx")
    save(external_model("missing.bin", 0, 24), "external_missing.onnx")
    save(external_model("../weights.bin", 8, 24), "external_escape.onnx")
    save(external_model("weights.bin", 16, 24), "external_range.onnx")

    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3, 224, 224])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 3, 224, 224])
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"], name="relu")],
                          "dynamic", [x], [y])
    save(model(g), "dynamic.onnx")

    # make_tensor without raw=True stores floats in float_data, int64 in int64_data and
    # float16 / bool as int32_data: the typed storage forms.
    c = helper.make_tensor("c_value", TensorProto.FLOAT, [2, 3], [1, 2, 3, 4, 5, 6])
    w = helper.make_tensor("W", TensorProto.FLOAT, [2, 3], [0.25, -1, 2, -3, 4, 1e6])
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [3, -1])
    h = helper.make_tensor("H", TensorProto.FLOAT16, [3], [1.0, -2.0, 0.5])
    b = helper.make_tensor("B", TensorProto.BOOL, [2], [True, False])
    nodes = [
        helper.make_node("Constant", [], ["C"], name="const", value=c),
        helper.make_node("Add", ["X", "C"], ["S"], name="add"),
        helper.make_node("Add", ["S", "W"], ["T"], name="add_w"),
        helper.make_node("Reshape", ["T", "shape"], ["Y"], name="reshape"),
        helper.make_node("Identity", ["H"], ["HO"], name="id_h"),
        helper.make_node("Identity", ["B"], ["BO"], name="id_b"),
    ]
    g = helper.make_graph(
        nodes, "constant",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 2]),
         helper.make_tensor_value_info("HO", TensorProto.FLOAT16, [3]),
         helper.make_tensor_value_info("BO", TensorProto.BOOL, [2])],
        initializer=[w, shape, h, b])
    save(model(g), "constant.onnx")

    def branch(name, value):
        t = helper.make_tensor(name + "_v", TensorProto.FLOAT, [1], [value])
        return helper.make_graph(
            [helper.make_node("Constant", [], [name + "_out"], value=t)], name, [],
            [helper.make_tensor_value_info(name + "_out", TensorProto.FLOAT, [1])])

    g = helper.make_graph(
        [helper.make_node("If", ["cond"], ["Y"], name="choose",
                          then_branch=branch("then", 1.0), else_branch=branch("else", 0.0))],
        "graph_attr",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1])])
    save(model(g), "graph_attr.onnx")
    return 0


if __name__ == "__main__":
    sys.exit(main())
