#!/usr/bin/env python3
"""A memory-bound model for tests/sweep.sh: a chain of N unary element-wise
ops on one large tensor.  Compiled with element-wise fusion off, every op is
its own kernel streaming the tensor from and to main memory, so latency
follows hbm.bandwidth_gbps.

usage: sweep_model.py OUT.onnx [N [D0,D1,...]]   (default 6 ops on 8x256x256)"""
import sys

import onnx
from onnx import TensorProto, helper


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    shape = [int(d) for d in sys.argv[3].split(",")] if len(sys.argv) > 3 else [8, 256, 256]
    ops = ["Relu", "Abs", "Neg"]
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, shape)
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, shape)
    nodes, prev = [], "a"
    for i in range(n):
        op = ops[i % len(ops)]
        nxt = "z" if i == n - 1 else f"t{i}"
        nodes.append(helper.make_node(op, [prev], [nxt], name=f"{op.lower()}{i}"))
        prev = nxt
    g = helper.make_graph(nodes, "chain", [a], [z])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
