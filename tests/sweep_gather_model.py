#!/usr/bin/env python3
"""An embedding lookup for tests/sweep.sh: Gather of a constant table by an
int64 ids input, then Relu.  Its ids are the input simrun and simsweep once
made differently (random indices against zeros); both now run the same
seeded inputs and must report the same latency.

usage: sweep_gather_model.py OUT.onnx"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    rng = np.random.default_rng(1)
    table = numpy_helper.from_array(rng.standard_normal((1000, 64)).astype(np.float32), "table")
    g = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["e"], axis=0),
         helper.make_node("Relu", ["e"], ["y"])],
        "gather", [helper.make_tensor_value_info("ids", TensorProto.INT64, [4, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 32, 64])], [table])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
