#!/usr/bin/env python3
"""simcmp: layer-by-layer accuracy comparison of the simulator with ONNX Runtime.

usage: simcmp.py --model=M.onnx --soc_version=SOC [--input-dir=D | --seed=N]
                 [--threshold=0.99] [--csv=F] [--json=F] [--verify-hint]
                 [--input_shape=S] [--precision_mode=M] [--keep_dtype=F]
                 [--work=DIR] [--bindir=DIR]

Compiles the model with simatc --keep_all_outputs=1 (every node's output after
the passes is also a model output), runs it on the simulator with the
arithmetic (simrun) and the same model on ONNX Runtime's CPU provider
(tests/ort_run.js) with every node's output made a graph output, on the same
inputs (input_N.pb from --input-dir, else seeded random ones), and prints per
ONNX node, in the model's (topological) order: its op, the precision the
compiler chose for the kernel computing it and why, the cosine similarity,
the largest absolute error and the largest relative error of its output.
The first node whose cosine is below --threshold (or whose output has inf/NaN
that ONNX Runtime's has not) is flagged, with a hint: the --keep_dtype entry
that would compute it in fp32, or why no option can.  --verify-hint compiles
again with that entry and shows the node's and the model outputs' cosines.

A node whose output is never in memory on the device (a fused Relu, an
element-wise chain, a MatMul's bias, an attention scale moved into the
Softmax) has nothing to compare: its row names the next node compared.
Relative error: |sim - ref| over
max(|ref|, 1e-3 * max|ref|) (near-zero references do not dominate).

Exit status: 0 every node within the threshold; 1 a node diverged; 2 bad
options, a model simatc refuses, or a failed run (the message says which).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CUBE_OPS = ("Conv", "ConvTranspose", "Gemm", "MatMul")


def die(msg, rc=2):
    sys.stderr.write("simcmp: " + msg + "\n")
    sys.exit(rc)


try:
    import numpy as np
    import onnx
    import onnx.numpy_helper
except ImportError as e:
    die("needs python3-numpy and python3-onnx: %s" % e)

# ONNX TensorProto.DataType -> numpy (the types simrun's inputs take)
NP_TYPE = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 9: np.bool_,
           10: np.float16}


def tool(bindir, name):
    for d in ([bindir] if bindir else [os.path.join(HERE, ".."), os.path.join(HERE)]):
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    p = shutil.which(name)
    if not p:
        die("cannot find %s (build the tree or give --bindir)" % name)
    return p


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        lines = [l for l in (p.stderr or p.stdout).strip().splitlines() if l.strip()]
        die("%s failed (exit %d): %s" % (what, p.returncode, lines[-1] if lines else "no message"))
    return p.stdout


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return onnx.numpy_helper.to_array(t)


def parse_shapes(s):
    out = {}
    for part in filter(None, (s or "").split(";")):
        name, _, dims = part.rpartition(":")
        if not name:
            die("--input_shape: '%s' is not name:d0,d1,..." % part)
        try:
            out[name] = [int(d) for d in dims.split(",")]
        except ValueError:
            die("--input_shape: '%s' is not name:d0,d1,..." % part)
    return out


def make_inputs(model, shapes, seed, d):
    """Seeded random inputs: floats in [-1, 1), integers in {0, 1}."""
    rng = np.random.default_rng(seed)
    inits = {i.name for i in model.graph.initializer}
    os.makedirs(d, exist_ok=True)
    k = 0
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dims = shapes.get(vi.name) or [x.dim_value if x.HasField("dim_value") else -1
                                       for x in tt.shape.dim]
        if any(x < 0 for x in dims):
            die("input '%s' has dynamic dimensions: give them with --input_shape or "
                "--input-dir" % vi.name)
        dt = NP_TYPE.get(tt.elem_type)
        if dt is None:
            die("input '%s': element type %d not supported yet" % (vi.name, tt.elem_type))
        if np.issubdtype(dt, np.floating):
            a = rng.uniform(-1, 1, dims).astype(dt)
        else:
            a = rng.integers(0, 2, dims).astype(dt)
        with open(os.path.join(d, "input_%d.pb" % k), "wb") as f:
            f.write(onnx.numpy_helper.from_array(a, vi.name).SerializeToString())
        k += 1


def compare(sim, ref):
    """cosine, max abs error, max relative error, a note."""
    if sim.size != ref.size:
        return float("nan"), float("nan"), float("nan"), "shape %s vs %s" % (
            list(sim.shape), list(ref.shape))
    a = sim.astype(np.float64).ravel()
    b = ref.astype(np.float64).ravel()
    fa, fb = np.isfinite(a), np.isfinite(b)
    note = ""
    if not (fa == fb).all() or not (a[~fa] == b[~fb]).all():
        bad = int((~fa & fb).sum())
        note = "%d inf/NaN the reference has not" % bad if bad else "inf/NaN differ"
        return float("nan"), float("inf"), float("inf"), note
    a, b = a[fa], b[fb]
    if a.size == 0:
        return 1.0, 0.0, 0.0, note
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    cos = 1.0 if na == nb == 0 else (0.0 if na == 0 or nb == 0 else float(np.dot(a, b) / (na * nb)))
    err = np.abs(a - b)
    floor = max(float(np.abs(b).max()) * 1e-3, np.finfo(np.float64).tiny)
    rel = float((err / np.maximum(np.abs(b), floor)).max())
    return min(cos, 1.0), float(err.max()), rel, note


def depends_on_input(model):
    """Tensors whose values depend on a graph input (Shape/Size read only the
    shape, fixed at compile time): the rest are folded to constants."""
    inits = {i.name for i in model.graph.initializer}
    dyn = {vi.name for vi in model.graph.input if vi.name not in inits}
    for n in model.graph.node:
        if n.op_type in ("Shape", "Size"):
            continue
        if any(i in dyn for i in n.input if i):
            dyn.update(o for o in n.output if o)
    return dyn


class Run:
    """One compile and simulator run of the model with every node output kept."""

    def __init__(self, a, work, tag, keep_dtype):
        self.om = os.path.join(work, tag)
        self.report = os.path.join(work, tag + ".json")
        cmd = [tool(a.bindir, "simatc"), "--model=" + a.model, "--framework=5",
               "--output=" + self.om, "--soc_version=" + a.soc_version,
               "--keep_all_outputs=1", "--report=" + self.report]
        for k in ("input_shape", "precision_mode"):
            if getattr(a, k):
                cmd.append("--%s=%s" % (k, getattr(a, k)))
        if keep_dtype:
            cmd.append("--keep_dtype=" + keep_dtype)
        for s in a.set or []:
            cmd += ["--set", s]
        run(cmd, "simatc")
        with open(self.report) as f:
            rep = json.load(f)
        self.kept = {k["tensor"]: k for k in rep.get("kept_outputs", [])}
        self.prec = {p["node"]: p for p in rep.get("precision", [])}
        out = os.path.join(work, tag + "_out")
        run([tool(a.bindir, "simrun"), self.om + ".om", "--input-dir", a.inputs,
             "--output-dir", out, "--loop", "1"] + sum((["--set", s] for s in a.set or []), []),
            "simrun")
        self.out = lambda k: load_pb(os.path.join(out, "output_%d.pb" % k))


def print_version(argv):
    """--version: the package version of the simatc this tool drives (configure's
    version; this script is not configured), as every tool prints it."""
    bindir = None
    for i, x in enumerate(argv):
        if x.startswith("--bindir="):
            bindir = x.split("=", 1)[1]
        elif x == "--bindir" and i + 1 < len(argv):
            bindir = argv[i + 1]
    out = subprocess.run([tool(bindir, "simatc"), "--version"], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout.split()
    print("simcmp (davinci-sim) %s" % (out[-1] if out else "unknown"))


def main():
    if "--version" in sys.argv[1:]:
        print_version(sys.argv[1:])
        return
    ap = argparse.ArgumentParser(prog="simcmp", description=__doc__.split("\n")[0],
                                 epilog="Exit status: 0 within the threshold, 1 a node "
                                 "diverged, 2 bad options or a failed compile/run.")
    ap.add_argument("--model", required=True)
    ap.add_argument("--soc_version", required=True)
    ap.add_argument("--input-dir", dest="input_dir", help="input_N.pb files (ONNX TensorProto)")
    ap.add_argument("--seed", type=int, default=1, help="random inputs' seed (default 1)")
    ap.add_argument("--threshold", type=float, default=0.99,
                    help="cosine below which a node diverges (default 0.99)")
    ap.add_argument("--worst", type=int, default=0, metavar="N",
                    help="also list the N nodes of lowest cosine")
    ap.add_argument("--csv", help="write the table as CSV")
    ap.add_argument("--json", help="write the table and the verdict as JSON")
    ap.add_argument("--verify-hint", dest="verify_hint", action="store_true",
                    help="compile again with the hint's --keep_dtype and compare")
    ap.add_argument("--input_shape", help="simatc's --input_shape")
    ap.add_argument("--precision_mode", help="simatc's --precision_mode")
    ap.add_argument("--keep_dtype", help="simatc's --keep_dtype file")
    ap.add_argument("--set", action="append", help="SEC.KEY=VALUE, a SoC key (repeatable)")
    ap.add_argument("--work", help="keep the .om, outputs and reference here (default: a "
                    "temporary directory, removed)")
    ap.add_argument("--bindir", help="where simatc and simrun are (default: the build tree, "
                    "then PATH)")
    ap.add_argument("--version", action="store_true",
                    help="print the version (the simatc's it drives) and exit")
    a = ap.parse_args()
    if not (0 < a.threshold <= 1):
        die("--threshold=%g: a cosine in (0, 1]" % a.threshold)
    if not os.path.isfile(a.model):
        die("--model %s: no such file" % a.model)
    if a.keep_dtype and not os.path.isfile(a.keep_dtype):
        die("--keep_dtype %s: no such file" % a.keep_dtype)
    a.model = os.path.abspath(a.model)
    try:
        model = onnx.load(a.model, load_external_data=False)
    except Exception as e:
        die("--model %s: not an ONNX model: %s" % (a.model, e))
    work = a.work or tempfile.mkdtemp(prefix="simcmp_")
    os.makedirs(work, exist_ok=True)
    try:
        return compare_model(a, model, work)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


def compare_model(a, model, work):
    if a.input_dir:
        if not os.path.isfile(os.path.join(a.input_dir, "input_0.pb")):
            die("--input-dir %s: no input_0.pb" % a.input_dir)
        a.inputs = a.input_dir
    else:
        a.inputs = os.path.join(work, "inputs")
        make_inputs(model, parse_shapes(a.input_shape), a.seed, a.inputs)
    sim = Run(a, work, "sim", a.keep_dtype)

    # ONNX Runtime: the model's outputs, then the kept tensors the model has
    # (not those a pass made, e.g. pass_decompose.c's), in the .om's order
    nout = len(model.graph.output)
    onnx_tensors = {o for n in model.graph.node for o in n.output}
    order = sorted((k for k in sim.kept.values()
                    if not k["model_output"] and k["tensor"] in onnx_tensors),
                   key=lambda k: k["output"])
    ref_index = {o.name: i for i, o in enumerate(model.graph.output)}
    ref_model = onnx.load(a.model)
    for k in order:
        ref_index[k["tensor"]] = len(ref_model.graph.output)
        ref_model.graph.output.append(onnx.ValueInfoProto(name=k["tensor"]))
    ref_path = os.path.join(work, "reference.onnx")
    onnx.save(ref_model, ref_path)
    del ref_model
    ref_out = os.path.join(work, "ref_out")
    run(["node", os.path.join(HERE, "..", "tests", "ort_run.js"), ref_path, a.inputs, ref_out],
        "ONNX Runtime (tests/ort_run.js)")

    def ref(tensor):
        return load_pb(os.path.join(ref_out, "output_%d.pb" % ref_index[tensor]))

    mode = a.precision_mode or "force_fp16"
    dyn = depends_on_input(model)
    consumers, producer = {}, {}
    for n in model.graph.node:
        for o in n.output:
            producer[o] = n.name or o
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    def computed_in(t, seen):
        if t in sim.kept:
            return t
        if t in seen:
            return None
        seen.add(t)
        for n in consumers.get(t, []):
            for o in n.output:
                r = computed_in(o, seen)
                if r:
                    return r
        return None

    rows, first = [], None
    for idx, n in enumerate(model.graph.node):
        for o in n.output:
            if not o:
                continue
            row = {"index": idx, "node": n.name or o, "op": n.op_type, "tensor": o}
            k = sim.kept.get(o)
            if k is None:
                if o not in dyn:
                    row["status"] = "folded to a constant at compile time"
                else:
                    t = computed_in(o, set())
                    row["status"] = ("fused: not in memory on the device; next compared "
                                     "at %s (the kernel of %s)" % (producer[t],
                                                                   sim.kept[t]["node"])
                                     if t else "not computed on the device")
                rows.append(row)
                continue
            cnode = k["node"]
            p = sim.prec.get(cnode, {}) if cnode else {}
            row["kernel_node"] = cnode
            row["kernel_op"] = k.get("op")
            row["fused"] = k.get("fused", "")
            row["precision"] = p.get("precision", "")
            row["reason"] = p.get("reason") or (mode + (" (the default)" if mode ==
                                                        "force_fp16" else ""))
            r = ref(o)
            cos, mabs, mrel, note = compare(sim.out(k["output"]), r)
            fin = np.abs(r[np.isfinite(r)].astype(np.float64))
            row.update(cosine=cos, max_abs_err=mabs, max_rel_err=mrel,
                       ref_max=float(fin.max()) if fin.size else 0.0)
            row["status"] = note or "ok"
            row["_out"] = k["output"]
            if not (cos >= a.threshold):
                row["status"] = "below threshold" + (": " + note if note else "")
                if first is None:
                    first = row
                    row["first_divergence"] = True
            rows.append(row)

    hint = None
    if first:
        hint = make_hint(a, first)
    print_table(a, rows, first, hint)

    verify = None
    if first and a.verify_hint and hint.get("keep_dtype_entry"):
        kd = os.path.join(work, "keep_dtype.cfg")
        with open(kd, "w") as f:
            if a.keep_dtype:
                with open(a.keep_dtype) as g:
                    f.write(g.read().rstrip("\n") + "\n")
            f.write(hint["keep_dtype_entry"] + "\n")
        again = Run(a, work, "verify", kd)
        k = again.kept.get(first["tensor"])
        cos = compare(again.out(k["output"]), ref(first["tensor"]))[0] if k else float("nan")
        outs = [compare(again.out(i), ref(model.graph.output[i].name))[0] for i in range(nout)]
        p = again.prec.get(hint["keep_dtype_entry"], {})
        verify = {"keep_dtype_entry": hint["keep_dtype_entry"], "node_cosine": cos,
                  "precision": p.get("precision"), "reason": p.get("reason"),
                  "output_cosines": outs,
                  "fixed": bool(cos >= a.threshold and all(c >= a.threshold for c in outs))}
        print("verify: --keep_dtype with '%s' (now %s: %s): %s cosine %s (was %s); model "
              "output%s %s: %s" % (
            hint["keep_dtype_entry"], p.get("precision"), p.get("reason"), first["node"],
            fmt(cos), fmt(first["cosine"]),
            "s" if nout > 1 else "", ", ".join(fmt(c) for c in outs),
            "fixed" if verify["fixed"] else "NOT fixed"))

    for r in rows:
        r.pop("_out", None)
    if a.csv:
        import csv
        cols = ["index", "node", "op", "tensor", "kernel_node", "fused", "precision", "reason",
                "cosine", "max_abs_err", "max_rel_err", "ref_max", "status"]
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow(r)
    if a.json:
        def clean(v):
            return None if isinstance(v, float) and not np.isfinite(v) else v
        with open(a.json, "w") as f:
            json.dump({"model": a.model, "soc": a.soc_version, "precision_mode": mode,
                       "threshold": a.threshold,
                       "first_divergence": first["node"] if first else None,
                       "hint": hint, "verify": verify,
                       "nodes": [{k: clean(v) for k, v in r.items()} for r in rows]},
                      f, indent=1)
            f.write("\n")
    return 1 if first else 0


def make_hint(a, row):
    cnode = row.get("kernel_node")
    fused_ops = row.get("fused") or ""
    if row.get("precision") == "fp32":
        return {"text": "%s already computes in fp32: look at its inputs" % row["node"]}
    if row.get("precision") == "int8":
        return {"text": "%s computes in int8 (the QDQ model's scales): check them" % row["node"]}
    if not cnode:
        return {"text": "%s is a model output computed by an edge task" % row["node"]}
    if row.get("kernel_op") in CUBE_OPS:
        return {"text": "%s runs on the cube (in the kernel of %s), which multiplies fp16 "
                "only on %s: --keep_dtype cannot help; look at the range of its inputs "
                "and weights" % (row["node"], cnode, a.soc_version)}
    why = "fp16 overflows or loses range in %s" % row["node"]
    if fused_ops:
        why += " (its kernel also computes %s)" % fused_ops
    return {"text": "%s: compile with --keep_dtype=FILE, FILE holding the line '%s' (or "
            "--precision_mode=must_keep_origin_dtype for the whole model)" % (why, cnode),
            "keep_dtype_entry": cnode,
            "precision_mode": "must_keep_origin_dtype"}


def fmt(v):
    return "nan" if v != v else ("%.6f" % v)


def print_table(a, rows, first, hint):
    print("simcmp: %s on %s (%s), threshold cosine %g" % (
        os.path.basename(a.model), a.soc_version, a.precision_mode or "force_fp16", a.threshold))
    print("%-4s %-28s %-14s %-5s %-9s %-10s %-10s  %s" % (
        "#", "node", "op", "prec", "cosine", "max_abs", "max_rel", "why / status"))
    for r in rows:
        if "cosine" not in r:
            print("%-4d %-28s %-14s %-5s %-9s %-10s %-10s  %s" % (
                r["index"], r["node"][:28], r["op"][:14], "-", "-", "-", "-", r["status"]))
            continue
        flag = "  <-- first divergence" if r is first else ""
        note = r["reason"] + ("; " + r["status"] if r["status"] != "ok" else "")
        if r.get("fused"):
            note += "; kernel of %s with %s fused" % (r["kernel_node"], r["fused"])
        print("%-4d %-28s %-14s %-5s %-9s %-10.4g %-10.4g  %s%s" % (
            r["index"], r["node"][:28], r["op"][:14], r["precision"], fmt(r["cosine"]),
            r["max_abs_err"], r["max_rel_err"], note, flag))
    compared = [r for r in rows if "cosine" in r]
    print("%d nodes, %d outputs compared, %d fused or folded" % (
        len(rows), len(compared), len(rows) - len(compared)))
    if a.worst:
        print("worst %d by cosine:" % a.worst)
        # NaN first, then the lowest
        by_cos = sorted(compared, key=lambda r: (r["cosine"] == r["cosine"], r["cosine"]))
        for r in by_cos[:a.worst]:
            print("  %-40s %-14s %-5s cosine %s, max abs %.4g (of max |ref| %.4g), max rel "
                  "%.4g%s" % (r["node"], r["op"], r["precision"], fmt(r["cosine"]),
                              r["max_abs_err"], r["ref_max"], r["max_rel_err"],
                              " (kernel of %s, %s fused)" % (r["kernel_node"], r["fused"])
                              if r.get("fused") else ""))
    if first:
        print("first divergence: %s (%s), cosine %s" % (first["node"], first["op"],
                                                      fmt(first["cosine"])))
        print("hint: " + hint["text"])
    else:
        print("every node within cosine %g" % a.threshold)


if __name__ == "__main__":
    sys.exit(main())
