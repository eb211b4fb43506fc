#!/usr/bin/python3
"""Fit the task-cost terms that have no public value, once per chip family,
on the calibration set of ascend.md section 4 (bench/validation.sh's rows),
and show the fit's residuals and a leave-one-out check.

usage: bench/calibrate.py BUILD_DIR WORK_DIR [--rows REGEX] [--icache] [--apply]
  WORK_DIR is a bench/validation.sh work directory (its rows.tsv and the .om
  of every row).  --rows fits only the rows whose "model precision soc
  batch" matches (all rows are still simulated and shown).  JOBS=N simruns
  at once (default: nproc).

The terms (sim/soc.def; what each models is in docs/validation.md):
  runtime.model_exec_us     one model execution's fixed cost
  runtime.task_gap_us       the task scheduler's cost between two tasks
  core.icache_miss_cycles   the scalar unit's stall on an instruction miss

Method: the first two add to a one-stream execution exactly (once, and once
per kernel task), so a row's latency is L(miss) + exec + tasks * gap, where
L(miss) is simrun's latency with both at 0.  The third is not linear (a
stall is hidden while the pipes are busy), so with --icache it is searched
on a grid from 0 to the L2's hit latency (the instruction cache is filled
from the L2, msprof's icache description): at each grid value every row is
simulated and (exec, gap) >= 0 minimise the sum of squared relative latency
errors against the published figures; the grid value with the least sum
wins.  Without --icache it stays 0: the cache has no prefetch yet, so a
miss cost that fits ResNet-101 on the 310 (80 cycles) makes a straight-line
kernel such as tests/kernels/gemm_db.s twelve times slower, which no chip
with a sequential prefetcher would be.
The leave-one-out check repeats the whole fit without one row and predicts
it.  Published figures outside section 4 are not used.

Every figure in the final table is simrun's at the fitted values, not the
model's.  --apply writes the fitted values into sim/soc/<SoC>.ini (the
lines holding the keys).
"""
import itertools
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

EXEC, GAP, MISS = "runtime.model_exec_us", "runtime.task_gap_us", "core.icache_miss_cycles"
GRID = [0, 5, 10, 15, 20, 30, 40, 60, 80, 120, 160, 241]  # cycles; 241: l2.latency_cycles
# the SoCs that share one set of fitted terms
FAMILY_OF = {"Ascend310": "Ascend310", "Ascend310P3": "Ascend310P3"}


def die(msg):
    sys.stderr.write("calibrate.py: %s\n" % msg)
    sys.exit(1)


def read_rows(work):
    path = os.path.join(work, "rows.tsv")
    if not os.path.exists(path):
        die("%s: no rows.tsv (run bench/validation.sh BUILD_DIR %s first)" % (path, work))
    rows = []
    for line in open(path):
        tag, model, soc, batch, prec, pub = line.rstrip("\n").split("\t")
        om = os.path.join(work, tag + ".om")
        if not os.path.exists(om):
            die("%s: missing (the row's compile failed?)" % om)
        b = int(batch)
        rows.append(dict(tag=tag, model=model, soc=soc, batch=b, prec=prec,
                         pub_fps=float(pub), pub_us=b * 1e6 / float(pub), om=om,
                         fam=FAMILY_OF.get(soc, soc),
                         key="%s %s %s %d" % (model, prec, soc, b)))
    return rows


def simrun_cmd(build, row, exec_us, gap_us, miss):
    return [os.path.join(build, "simrun"), "--soc", row["soc"], row["om"], "--mode", "timing",
            "--json", "--loop", "3", "--set", "%s=%.6g" % (EXEC, exec_us),
            "--set", "%s=%.6g" % (GAP, gap_us), "--set", "%s=%d" % (MISS, miss)]


def simulate(build, row, exec_us, gap_us, miss):
    """(warm latency us, kernel tasks per execution) of one row."""
    cmd = simrun_cmd(build, row, exec_us, gap_us, miss)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die("%s: %s" % (" ".join(cmd), p.stderr.strip()[-400:]))
    d = json.loads(p.stdout)
    return d["warm_latency_us"], len(d["tasks"])  # the model's kernel tasks


def fit_linear(L, T, P):
    """(exec, gap) >= 0 minimising sum(((L + exec + T gap) / P - 1)^2), and
    the sum."""
    A = np.stack([1.0 / P, T / P], axis=1)
    b = 1.0 - L / P
    best = None
    for k in (2, 1, 0):
        for free in itertools.combinations(range(2), k):
            x = np.zeros(2)
            if free:
                sol, *_ = np.linalg.lstsq(A[:, free], b, rcond=None)
                if (sol < 0).any():
                    continue
                x[list(free)] = sol
            cost = float(((A @ x - b) ** 2).sum())
            if best is None or cost < best[1] - 1e-15:
                best = (x, cost)
    return best


def fit(idx, Lg, T, P, grid):
    """The best (miss, exec, gap) over the grid for the rows idx."""
    best = None
    for g, miss in enumerate(grid):
        x, cost = fit_linear(Lg[g][idx], T[idx], P[idx])
        if best is None or cost < best[3] - 1e-15:
            best = (miss, x[0], x[1], cost)
    return best[:3]


def apply_values(src, soc, values):
    path = os.path.join(src, "sim", "soc", soc + ".ini")
    text = open(path).read()
    miss, exec_us, gap_us = values
    for key, new in ((EXEC, "%.3g" % exec_us), (GAP, "%.3g" % gap_us), (MISS, "%d" % miss)):
        name = key.split(".")[1]
        text, n = re.subn(r"(?m)^%s = .*$" % re.escape(name), "%s = %s" % (name, new), text)
        if n != 1:
            die("%s: key %s found %d times" % (path, name, n))
    open(path, "w").write(text)


def main():
    argv = sys.argv[1:]
    pattern = None
    grid = GRID if "--icache" in argv else [0]
    if "--rows" in argv:
        k = argv.index("--rows")
        if k + 1 >= len(argv):
            die("--rows needs a REGEX")
        pattern = re.compile(argv[k + 1])
        del argv[k:k + 2]
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2:
        die("usage: calibrate.py BUILD_DIR WORK_DIR [--rows REGEX] [--apply]")
    build, work = (os.path.abspath(a) for a in args)
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ.setdefault("DAVINCI_SOC_DIR", os.path.join(src, "sim", "soc"))
    jobs = int(os.environ.get("JOBS", os.cpu_count() or 1))
    rows = read_rows(work)
    P = np.array([r["pub_us"] for r in rows])
    # the grid's simulations, kept in WORK for a rerun with other --rows (an
    # .om newer than the cache, or another simrun, makes it stale)
    cache_path = os.path.join(work, "calibrate_cache.json")
    stamp = "%s %d" % (os.path.join(build, "simrun"),
                       int(os.path.getmtime(os.path.join(build, "simrun"))))
    cache = {}
    if os.path.exists(cache_path):
        c = json.load(open(cache_path))
        if c.get("stamp") == stamp:
            cache = c["points"]

    def point(r, miss):
        k = "%s %d %d" % (r["tag"], miss, int(os.path.getmtime(r["om"])))
        if k not in cache:
            cache[k] = simulate(build, r, 0, 0, miss)
        return cache[k]
    Lg, T = [], None
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for miss in grid:
            res = list(ex.map(lambda r: point(r, miss), rows))
            Lg.append(np.array([x[0] for x in res]))
            T = np.array([x[1] for x in res], dtype=float)
            sys.stderr.write("calibrate.py: simulated every row at %s=%d\n" % (MISS, miss))
    json.dump({"stamp": stamp, "points": cache}, open(cache_path, "w"))
    Lg = np.array(Lg)
    used = [i for i, r in enumerate(rows) if not pattern or pattern.search(r["key"])]
    fams = sorted(set(r["fam"] for r in rows))
    fitted, loo = {}, {}
    for fam in fams:
        idx = [i for i in used if rows[i]["fam"] == fam]
        if not idx:
            die("no row of %s is in the fit" % fam)
        fitted[fam] = fit(idx, Lg, T, P, grid)
        for j in idx:
            rest = [i for i in idx if i != j]
            if not rest:
                continue
            miss, e, gap = fit(rest, Lg, T, P, grid)
            loo[j] = Lg[grid.index(miss)][j] + e + T[j] * gap
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        final = list(ex.map(lambda r: simulate(build, r, fitted[r["fam"]][1], fitted[r["fam"]][2],
                                               fitted[r["fam"]][0])[0], rows))
    print("Fitted terms (`bench/calibrate.py`, least squares on relative latency error%s):\n" %
          (", rows matching `%s`" % pattern.pattern if pattern else ", every row"))
    print("| family | rows fitted | %s | %s | %s |" % (EXEC, GAP, MISS))
    print("|---|---:|---:|---:|---:|")
    for fam in fams:
        miss, e, gap = fitted[fam]
        n = sum(1 for i in used if rows[i]["fam"] == fam)
        print("| %s | %d | %.3g | %.3g | %d |" % (fam, n, e, gap, miss))
    print("\n| model | precision | SoC | batch | published img/s | simulated img/s | "
          "simulated / published | in the fit | left out: predicted img/s | "
          "left out / published |")
    print("|---|---|---|---:|---:|---:|---:|---|---:|---:|")
    errs, loo_errs = [], []
    for i, r in enumerate(rows):
        fam = r["fam"]
        sim_fps = r["batch"] * 1e6 / final[i]
        err = sim_fps / r["pub_fps"] - 1
        name = "ResNet-" + r["model"][6:] if r["model"].startswith("resnet") else r["model"]
        infit = i in used
        if infit:
            errs.append(err)
        if i in loo:
            lf = r["batch"] * 1e6 / loo[i]
            loo_errs.append(lf / r["pub_fps"] - 1)
            lcol = "%.1f | %.2f" % (lf, lf / r["pub_fps"])
        else:
            lcol = "— | —"
        print("| %s | %s | %s | %d | %.1f | %.1f | %.2f | %s | %s |" % (
            name, r["prec"].upper(), r["soc"], r["batch"], r["pub_fps"], sim_fps,
            sim_fps / r["pub_fps"], "yes" if infit else "no", lcol))
    allerr = [r["batch"] * 1e6 / final[i] / r["pub_fps"] - 1 for i, r in enumerate(rows)]
    print("\nRows in the fit: mean absolute error %.1f%%, worst %.1f%%, %d of %d within 15%%; "
          "leave-one-out mean absolute error %.1f%%.  Every row: mean absolute error %.1f%%, "
          "%d of %d within 15%%." % (
              100 * np.mean(np.abs(errs)), 100 * np.max(np.abs(errs)),
              sum(abs(e) <= 0.15 for e in errs), len(errs),
              100 * np.mean(np.abs(loo_errs)) if loo_errs else float("nan"),
              100 * np.mean(np.abs(allerr)), sum(abs(e) <= 0.15 for e in allerr), len(allerr)))
    print("\nEach row's latency at the fitted terms is simrun's, e.g. `%s`." %
          " ".join(simrun_cmd(build, rows[0], fitted[rows[0]["fam"]][1],
                              fitted[rows[0]["fam"]][2], fitted[rows[0]["fam"]][0])))
    if "--apply" in sys.argv:
        for soc in sorted(set(r["soc"] for r in rows)):
            apply_values(src, soc, fitted[FAMILY_OF.get(soc, soc)])
        print("\nWrote the fitted terms into sim/soc/%s.ini." %
              ", ".join(sorted(set(r["soc"] for r in rows))))


if __name__ == "__main__":
    main()
