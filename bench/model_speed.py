#!/usr/bin/python3
"""Simulator speed on whole models against ONNX Runtime in the same run.

usage: bench/model_speed.py BUILD_DIR [WORK_DIR] [--runs N]

For ResNet-50 b1, BERT-base seq 128 b1 and MobileNetV2 b1: exports each
(cached in WORK_DIR, default BUILD_DIR/bench_models), compiles it for
Ascend910 with simatc (again when simatc or the ONNX file is newer than the
.om), then times, N times each (default 3) and keeps the median:
  - ORT: `node tests/ort_run.js --speed` (onnxruntime-node, CPU, one intra-op
    and one inter-op thread, ORT's default optimizations) running one
    inference: the wall time of the whole node process, and the inference
    alone as ORT reports it;
  - simrun full mode and --mode timing, one execution (--loop 1), with the
    same inputs: the wall time of the whole process and its peak RSS.
The ratios full/ORT and timing/ORT, which the floors are about, put the
whole simrun process (start, load, one execution, exit) against ORT's
inference alone, as issue 16 measured them (its 79 ms is ResNet-50's
inference); ORT's whole process (node's start and the session's creation,
which take most of it) is printed beside them, and the whole-process ratios
in the line after the table.  Peak RSS comes from wait4()'s
rusage of each child (no GNU time needed); "RSS/om" is simrun full mode's
peak RSS over the .om file size.  "Mcyc/s" is the execution's simulated
cycles (simrun --json "cycles", the weights' load excluded) per wall second
of the whole process.  The floors of issue 16 are printed with whether each
holds; the bench reports, it does not fail.  Ratios of one run are what
matter: on a shared machine absolute times move from run to run.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

FLOORS = (("full/ORT", 5.0), ("timing/ORT", 1.0), ("RSS/om", 2.0))


def die(msg):
    sys.stderr.write("model_speed.py: %s\n" % msg)
    sys.exit(1)


def run_child(cmd, env=None):
    """Run cmd; returns (wall seconds, peak RSS bytes of that child, stdout).
    wait4 gives the child's own rusage (RUSAGE_CHILDREN would be the maximum
    over every child so far)."""
    t0 = time.monotonic()
    with open(os.devnull, "wb") as devnull, \
            subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=devnull, env=env) as p:
        out = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        die("%s: exit status %d" % (" ".join(cmd), p.returncode))
    return wall, ru.ru_maxrss * 1024, out.decode()


def newer(a, b):
    return not os.path.exists(b) or os.path.getmtime(a) > os.path.getmtime(b)


def main():
    args, runs, argv = [], 3, sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a == "--runs" and argv and argv[0].isdigit() and int(argv[0]) > 0:
            runs = int(argv.pop(0))
        elif a.startswith("--"):
            die("unknown option %s" % a)
        else:
            args.append(a)
    if not args or len(args) > 2:
        die("usage: bench/model_speed.py BUILD_DIR [WORK_DIR] [--runs N]")
    build = os.path.abspath(args[0])
    src = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    work = os.path.abspath(args[1] if len(args) > 1 else os.path.join(build, "bench_models"))
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, DAVINCI_SOC_DIR=os.path.join(src, "sim", "soc"))
    simatc, simrun = os.path.join(build, "simatc"), os.path.join(build, "simrun")
    ort_run = os.path.join(src, "tests", "ort_run.js")
    if not os.path.isdir(os.path.join(src, "tests", "ort", "node_modules")):
        die("tests/ort/node_modules is missing (cd tests/ort && npm ci --ignore-scripts)")

    # (name, ONNX file, input directory, extra simatc options)
    models = [
        ("ResNet-50 b1", os.path.join(work, "resnet50_b1", "model.onnx"),
         os.path.join(work, "resnet50_b1", "test_data_set_0"), []),
        ("BERT-base s128 b1", os.path.join(work, "bert", "model.onnx"),
         os.path.join(work, "bert_s128_b1", "test_data_set_0"),
         ["--input_shape=input_ids:1,128"]),
        ("MobileNetV2 b1", os.path.join(work, "mobilenet_v2_b1", "model.onnx"),
         os.path.join(work, "mobilenet_v2_b1", "test_data_set_0"), []),
    ]
    py = "/usr/bin/python3"
    exports = []
    if not (os.path.exists(models[0][2]) and os.path.exists(models[2][2])):
        exports.append(["export_models.py", "resnet50:1", "mobilenet_v2:1"])
    if not os.path.exists(models[1][2]):
        exports.append(["export_bert.py", "128:1"])
    for e in exports:  # torch and torchvision: minutes, once per build directory
        p = subprocess.run([py, os.path.join(src, "tests", e[0]), work] + e[1:],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode:
            die("tests/%s failed (exit %d): %s" % (e[0], p.returncode,
                                                   p.stderr.decode()[-2000:]))

    rows = []
    for name, onnx, inputs, opts in models:
        stem = os.path.join(work, re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_"))
        om = stem + ".om"
        if newer(simatc, om) or newer(onnx, om):
            p = subprocess.run([simatc, "--model=" + onnx, "--framework=5", "--output=" + stem,
                                "--soc_version=Ascend910"] + opts, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if p.returncode:
                die("simatc %s failed: %s" % (onnx, p.stderr.decode()[-2000:]))
        ort_wall, ort_run_ms, full, timing = [], [], [], []
        cycles = None
        # interleaved, so that a change of the machine's load hits every side
        for _ in range(runs):
            w, _, out = run_child(["node", ort_run, onnx, inputs, os.path.join(work, "ort_out"),
                                   "--speed"])
            m = re.search(r"ort_ms session=([0-9.]+) run=([0-9.]+)", out)
            if not m:
                die("ort_run.js --speed printed no timing: %r" % out)
            ort_wall.append(w)
            ort_run_ms.append(float(m.group(2)))
            for mode, acc in (("full", full), ("timing", timing)):
                w, rss, out = run_child([simrun, "--soc", "Ascend910", om, "--loop", "1",
                                         "--input-dir", inputs, "--mode", mode, "--json"],
                                        env=env)
                c = json.loads(out)["cycles"]
                if cycles is not None and c != cycles:
                    die("%s: %s mode simulated %d cycles, another run %d" % (om, mode, c,
                                                                             cycles))
                cycles = c
                acc.append((w, rss))
        med = statistics.median
        o = med(ort_wall)
        f, t = med(w for w, _ in full), med(w for w, _ in timing)
        rss_full, rss_timing = med(r for _, r in full), med(r for _, r in timing)
        size = os.path.getsize(om)
        oi = med(ort_run_ms) / 1e3
        rows.append({"model": name, "ort_s": o, "ort_run_ms": med(ort_run_ms), "full_s": f,
                     "timing_s": t, "full/ORT": f / oi, "timing/ORT": t / oi,
                     "rss_full_mb": rss_full / 1e6, "rss_timing_mb": rss_timing / 1e6,
                     "om_mb": size / 1e6, "RSS/om": rss_full / size, "cycles": cycles,
                     "full_mcyc_s": cycles / f / 1e6, "timing_mcyc_s": cycles / t / 1e6})

    print("Ascend910, median of %d; simrun: whole process; ORT: one thread, one inference "
          "(ORT_s its whole process, ORTinf_ms the inference; the ratios use the inference)"
          % runs)
    hdr = ("%-18s %8s %8s %8s %8s %9s %10s %9s %9s %7s %7s %10s %10s"
           % ("model", "ORT_s", "ORTinf_ms", "full_s", "timing_s", "full/ORT", "timing/ORT",
              "RSSfullMB", "RSStimMB", "om_MB", "RSS/om", "full_Mcyc/s", "tim_Mcyc/s"))
    print(hdr)
    for r in rows:
        print("%-18s %8.3f %8.1f %8.3f %8.3f %9.2f %10.2f %9.1f %9.1f %7.1f %7.2f %10.2f %10.2f"
              % (r["model"], r["ort_s"], r["ort_run_ms"], r["full_s"], r["timing_s"],
                 r["full/ORT"], r["timing/ORT"], r["rss_full_mb"], r["rss_timing_mb"],
                 r["om_mb"], r["RSS/om"], r["full_mcyc_s"], r["timing_mcyc_s"]))
    print("whole process against whole process: " + ", ".join(
        "%s full %.2fx timing %.2fx" % (r["model"], r["full_s"] / r["ort_s"],
                                        r["timing_s"] / r["ort_s"]) for r in rows))
    print("floors (issue 16):")
    for key, limit in FLOORS:
        for r in rows:
            print("  %-10s <= %.0fx  %-18s %6.2f  %s" % (key, limit, r["model"], r[key],
                                                     "holds" if r[key] <= limit else "MISSED"))


if __name__ == "__main__":
    main()
