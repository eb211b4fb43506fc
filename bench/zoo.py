#!/usr/bin/env python3
"""The torchvision model zoo through simatc and simrun.

usage: zoo.py --list   (the zoo's architectures, comma-separated)
       zoo.py BUILD WORK [--socs A,B] [--full-soc SOC] [--batches 1,4]
              [--models a,b,...] [--timing-only] [--md FILE]

For every architecture (one or more per torchvision family, and the three
segmentation families) at each batch: export with random weights and a seeded
input (tests/export_models.py), compile for each SoC, run.  On --full-soc
(default Ascend310P3) the run does the arithmetic and the output of each image
is compared with PyTorch's (cosine similarity; the worst image is reported); on the other SoCs it runs in timing mode.
Prints one row per (model, batch, SoC) and, with --md, writes the table as
Markdown.  A model that does not compile is a row with simatc's reason.
Exit status: 1 if any row failed (refusal, run error, cosine < 0.999).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import onnx
import onnx.numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"

# One row per family member worth its own shapes: the smallest of each
# family, plus the members whose blocks differ (VGG with BN, ResNeXt's groups,
# Wide ResNet's widths, MobileNetV3's two heads, EfficientNet v2's fused
# MBConv, RegNet's X and Y, Swin v2's log-spaced CPB).
ZOO = [
    "alexnet", "vgg11", "vgg11_bn", "resnet18", "resnet50", "resnext50_32x4d",
    "wide_resnet50_2", "densenet121", "squeezenet1_0", "squeezenet1_1",
    "inception_v3", "googlenet", "shufflenet_v2_x1_0", "mobilenet_v2",
    "mobilenet_v3_small", "mobilenet_v3_large", "mnasnet1_0", "efficientnet_b0",
    "efficientnet_v2_s", "regnet_x_400mf", "regnet_y_400mf", "convnext_tiny",
    "vit_b_32", "vit_b_16", "swin_t", "swin_v2_t", "maxvit_t",
    "fcn_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large",
]


def run(cmd, timeout):
    t = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.time() - t
    except subprocess.TimeoutExpired:
        return -1, "", f"timeout after {timeout} s", time.time() - t


def reason(err):
    lines = [l for l in err.strip().splitlines() if l.strip()]
    return (lines[-1] if lines else "no message")[:160]


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return onnx.numpy_helper.to_array(t).astype(np.float64).ravel()


def cosine(a, b):
    if a.size != b.size:
        return float("nan")
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return 1.0 if na == nb else 0.0
    return float(np.dot(a, b) / (na * nb))


def export(work, name, batch):
    d = os.path.join(work, f"{name}_b{batch}")
    if not os.path.exists(os.path.join(d, "test_data_set_0", "output_0.pb")):
        rc, _, err, _ = run([PY, os.path.join(HERE, "..", "tests", "export_models.py"),
                             work, f"{name}:{batch}"], 1800)
        if rc != 0:
            return None, "export failed: " + reason(err)
    return d, None


def one(build, d, soc, full, timeout, batch):
    row = {"soc": soc, "batch_n": batch}
    om = os.path.join(d, f"zoo_{soc}")
    rc, _, err, sec = run([os.path.join(build, "simatc"), f"--model={d}/model.onnx",
                           "--framework=5", f"--output={om}", f"--soc_version={soc}",
                           f"--report={om}.json"], timeout)
    row["compile_s"] = sec
    if rc != 0:
        row["status"] = f"refused (exit {rc}): {reason(err)}"
        return row
    with open(om + ".json") as f:
        rep = json.load(f)
    row["tasks"] = len(rep.get("tasks", [])) if isinstance(rep.get("tasks"), list) else rep.get("tasks")
    outdir = om + "_out"
    cmd = [os.path.join(build, "simrun"), om + ".om", "--json", "--loop", "1"]
    if full:
        cmd += ["--input-dir", f"{d}/test_data_set_0", "--output-dir", outdir]
    else:
        cmd += ["--mode", "timing"]
    rc, out, err, sec = run(cmd, timeout)
    row["run_s"] = sec
    if rc != 0:
        row["status"] = f"run failed (exit {rc}): {reason(err)}"
        return row
    try:
        js = json.loads(out)
        row["latency_us"] = js.get("latency_us") or js.get("cycles", 0) / js.get("clock_mhz", 1)
    except (ValueError, AttributeError):
        row["latency_us"] = None
    if full:
        got = load_pb(os.path.join(outdir, "output_0.pb"))
        want = load_pb(os.path.join(d, "test_data_set_0", "output_0.pb"))
        # the worst image of the batch, not the batch as one vector
        b = row.get("batch_n", 1)
        row["cosine"] = min(cosine(g, w) for g, w in
                            zip(np.array_split(got, b), np.array_split(want, b))) \
            if got.size == want.size else float("nan")
        row["status"] = "ok" if row["cosine"] >= 0.999 else "cosine < 0.999"
    else:
        row["status"] = "ok"
    return row


def main():
    if sys.argv[1:] == ["--list"]:
        print(",".join(ZOO))
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("work")
    ap.add_argument("--socs", default="Ascend310P3,Ascend310,Ascend910")
    ap.add_argument("--full-soc", default="Ascend310P3")
    ap.add_argument("--batches", default="1,4")
    ap.add_argument("--models", default=",".join(ZOO))
    ap.add_argument("--timing-only", action="store_true")
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--md")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rows, bad = [], 0
    for name in a.models.split(","):
        for b in [int(x) for x in a.batches.split(",")]:
            d, err = export(a.work, name, b)
            for soc in a.socs.split(","):
                if d is None:
                    r = {"soc": soc, "status": err}
                else:
                    full = soc == a.full_soc and not a.timing_only
                    r = one(a.build, d, soc, full, a.timeout, b)
                r.update(model=name, batch=b)
                rows.append(r)
                bad += r["status"] != "ok"
                cos = r.get("cosine")
                print(f"{name:30s} b{b:<3d} {soc:12s} tasks={r.get('tasks', '-')!s:5s} "
                      f"lat_us={r.get('latency_us') or '-'!s:12.12s} "
                      f"cos={'-' if cos is None else f'{cos:.6f}'} "
                      f"compile={r.get('compile_s', 0):.1f}s run={r.get('run_s', 0):.1f}s "
                      f"{r['status']}", flush=True)
    if a.md:
        with open(a.md, "w") as f:
            f.write("| model | batch | SoC | tasks | latency (us) | cosine | status |\n")
            f.write("|---|---|---|---|---|---|---|\n")
            for r in rows:
                lat = r.get("latency_us")
                cos = r.get("cosine")
                f.write(f"| {r['model']} | {r['batch']} | {r['soc']} | {r.get('tasks', '-')} | "
                        f"{'-' if lat is None else f'{lat:.0f}'} | "
                        f"{'-' if cos is None else f'{cos:.6f}'} | {r['status']} |\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
