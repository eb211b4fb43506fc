"""onnx_case.py: what the test model generators share: a model of float
graph inputs and one float output "y" written with its data set in the
ONNX backend-test layout (NAME.onnx, NAME/input_N.pb, NAME/output_0.pb),
which tests/model_util.c's tu_run_compare reads."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def write_set(out, name, ins, y):
    """ins: (name, array) pairs, the graph inputs in order; y the output"""
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    for i, (k, v) in enumerate(ins):
        onnx.save_tensor(numpy_helper.from_array(np.asarray(v).astype(np.float32), k),
                         os.path.join(d, "input_%d.pb" % i))
    onnx.save_tensor(numpy_helper.from_array(np.asarray(y).astype(np.float32), "y"),
                     os.path.join(d, "output_0.pb"))


def save_case(out, name, nodes, ins, y, inits=(), opset=13):
    """The model (checked) and its data set; inits: TensorProtos or
    (name, array) pairs"""
    inits = [i if isinstance(i, onnx.TensorProto) else numpy_helper.from_array(i[1], i[0])
             for i in inits]
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape)) for k, v in ins],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))],
        initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))
    write_set(out, name, ins, y)
