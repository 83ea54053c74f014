#!/usr/bin/env python3
"""cluster_truth.py - topo-tune's predictions against published results of real clusters.

Called by scripts/bench/cluster-truth.sh (which says the options).  For every fact table of
tests/fixtures/published/ (format: that folder's README.md) it runs topo-tune out of the box on
the machine the table names (its `# topo-tune:` line) and compares:

  * time error per size class (<= 64 KiB, 64 KiB .. 16 MiB, >= 16 MiB), median and worst, per
    sweep and pooled, for the default model and for --model nccl;
  * the error at each sweep's largest size;
  * harm: rows of the NCCL table topo-tune makes (-f json --nccl-only, what the plugin and the
    CSV force) whose forced candidate the model itself predicts slower than what NCCL measured;
  * --expect verdicts on the healthy run, and on two degraded copies of it: large sizes
    (>= 16 MiB) that lost 25 % of their bandwidth, small sizes (<= 64 KiB) whose time doubled.

Nothing here is fitted: it only runs topo-tune and counts.  OLD=1 FACTS_DIRECT=0 TOPOTUNE=old/topo-tune
evaluates a build from before the fact-table reader, --fabric and --expect -f json (its text table;
no harm count).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FIX = os.path.join(ROOT, "tests", "fixtures")
SMALL, LARGE = 64 << 10, 16 << 20
DIRECT = os.environ.get("FACTS_DIRECT", "1") == "1"  # 0: feed topo-tune nccl-tests text copies of the tables
CLASSES = ("small", "medium", "large")


def size_class(b):
    return "small" if b <= SMALL else "large" if b >= LARGE else "medium"


def busbw_factor(coll, n):
    if coll == "allreduce":
        return 2.0 * (n - 1) / n
    if coll in ("allgather", "reducescatter"):
        return (n - 1) / n
    return 1.0


def load_facts(path):
    """The fact table: header fields and rows (bytes, time_us)."""
    head, rows = {}, []
    with open(path) as f:
        for ln, line in enumerate(f, 1):
            s = line.strip()
            if not s:
                continue
            if s.startswith("#"):
                body = s[1:].strip()
                for key in ("source", "hardware", "software", "run", "health", "topo-tune"):
                    if body.startswith(key + ":"):
                        head[key] = body[len(key) + 1:].strip()
                continue
            tok = s.split()
            if tok[0] in ("collective", "ranks", "nodes", "algo", "proto"):
                head[tok[0]] = tok[1]
                continue
            b = int(tok[0])
            vals = [None if t == "-" else float(t) for t in tok[1:4]]
            times = [v for v in vals[:2] if v is not None and v > 0]
            n = int(head["ranks"])
            if times:
                t = min(times)
            elif vals[2]:
                t = b / (vals[2] / busbw_factor(head["collective"], n)) / 1000.0
            else:
                raise SystemExit("%s:%d: no time and no busbw" % (path, ln))
            if b > 0:
                rows.append((b, t))
    head["rows"] = rows
    head["path"] = path
    return head


def write_facts(head, rows, path):
    """A copy of a fact table with other times (the degraded runs)."""
    with open(path, "w") as f:
        f.write("# topotune published result, version 1\n")
        for key in ("source", "hardware", "software", "run", "health", "topo-tune"):
            f.write("# %s: %s\n" % (key, head.get(key, "unknown")))
        for key in ("collective", "ranks", "nodes", "algo", "proto"):
            f.write("%s %s\n" % (key, head.get(key, "-")))
        f.write("# bytes oop_us ip_us oop_busbw\n")
        for b, t in rows:
            f.write("%d %.3f - -\n" % (b, t))


PROGS = {"allreduce": "all_reduce_perf", "allgather": "all_gather_perf", "reducescatter": "reduce_scatter_perf",
         "broadcast": "broadcast_perf", "reduce": "reduce_perf"}


def write_nccltests(head, rows, path):
    """The same figures as an nccl-tests text table (for topo-tune builds without the fact-table reader)."""
    n, N = int(head["ranks"]), int(head["nodes"])
    with open(path, "w") as f:
        f.write("# Collective test starting: %s\n" % PROGS[head["collective"]])
        f.write("# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
                "validation: 1 graph: 0\n#\n# Using devices\n")
        for r in range(n):
            f.write("#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x00] GPU\n" % (r, 1000 + r, "node%d" % (r * N // n),
                                                                                    r % (n // N)))
        f.write("#\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
                "algbw   busbw #wrong\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)   "
                "         (us)  (GB/s)  (GB/s)\n")
        for b, t in rows:
            alg = b / t / 1e3
            bus = alg * busbw_factor(head["collective"], n)
            f.write("%12d %12d     float     sum      -1 %8.2f %7.2f %7.2f      0 %8.2f %7.2f %7.2f      0\n" %
                    (b, max(b // 4, 1), t, alg, bus, t, alg, bus))
        f.write("# Collective test concluded: %s\n" % PROGS[head["collective"]])


def tt_args(head):
    """topo-tune arguments of the machine, the topology path made absolute."""
    line = head.get("topo-tune", "")
    if not line or line.startswith("none"):
        return None
    a = line.split()
    for i, x in enumerate(a):
        if x in ("-i", "--input") and i + 1 < len(a):
            a[i + 1] = os.path.join(FIX, a[i + 1])
    if os.environ.get("OLD") == "1" and "--fabric" in a:  # builds before --fabric
        i = a.index("--fabric")
        del a[i:i + 2]
    return a


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def expect_rows_text(tt, args, facts_path, model, calib=None):
    """The same from the text table of builds without --expect -f json (OLD=1): the ratio column is
    measured / predicted busbw = predicted / measured time."""
    cmd = [tt] + args + ["--model", model, "--expect", "--measured", facts_path]
    if calib:
        cmd += ["-c", calib]
    rc, out, err = run(cmd)
    if rc not in (0, 1, 2) or not out.strip():
        raise RuntimeError("%s: %s" % (" ".join(cmd), err.strip()))
    meas = {}
    for line in open(facts_path):
        t = line.split()
        if not t or not t[0].isdigit():
            continue
        cols = (5, 9) if len(t) >= 13 else (1, 2)  # an nccl-tests text copy, or a fact table
        v = [float(t[c]) for c in cols if c < len(t) and t[c] != "-"]
        if v:
            meas.setdefault(int(t[0]), min(v))
    rows = []
    for line in out.splitlines():
        t = line.split()
        if len(t) > 6 and t[0] in PROGS and t[1].isdigit():
            ratio = next(float(x[:-1]) / 100 for x in t if x.endswith("%"))
            verdict = next(x for x in t if x in ("PASS", "WARN", "FAIL"))
            b = int(t[1])
            if b in meas:
                rows.append((b, ratio * meas[b], meas[b], verdict, "?"))
    return rows


def expect_rows(tt, args, facts_path, model, calib=None):
    """[(bytes, pred_us, meas_us, verdict, candidate)] from topo-tune --expect --measured -f json."""
    if os.environ.get("OLD") == "1":
        return expect_rows_text(tt, args, facts_path, model, calib)
    cmd = [tt] + args + ["--model", model, "--expect", "-f", "json", "--measured", facts_path]
    if calib:
        cmd += ["-c", calib]
    rc, out, err = run(cmd)
    if rc not in (0, 1, 2) or not out.strip():
        raise RuntimeError("%s: %s" % (" ".join(cmd), err.strip()))
    d = json.loads(out)
    return [(r["bytes"], r["pred_us"], r["meas_us"], r["verdict"], r["algo"] + "/" + r["proto"]) for r in d["rows"]]


def forced_rows(tt, args, coll, calib=None):
    """{bytes: (forced candidate, its predicted time)} of the NCCL table topo-tune makes."""
    cmd = [tt] + args + ["-f", "json", "--nccl-only", "-C", coll]
    if calib:
        cmd += ["-c", calib]
    rc, out, err = run(cmd)
    if rc != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), err.strip()))
    d = json.loads(out)
    f, old = {}, {}
    for x in d.get("decisions", []):
        if x.get("forced"):
            f[x["bytes"]] = (x["best"], x["best_us"])
        if x["best"] != x["nccl"] and x["gain"] > 0.15:  # what the margin rule alone (15 %) would force
            old[x["bytes"]] = (x["best"], x["best_us"])
    return f, old


def pct(x):
    return "%.0f %%" % (100 * x) if x is not None else "-"


def summarize(errs):
    return (statistics.median(errs), max(errs)) if errs else (None, None)


def main():
    tt = os.environ.get("TOPOTUNE", os.path.join(ROOT, "build", "bin", "topo-tune"))
    calib = os.environ.get("CALIB") or None
    files = sys.argv[1:]
    if not files:
        d = os.path.join(FIX, "published")
        files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".txt"))
    models = ("topotune", "nccl")
    pooled = {m: {c: [] for c in CLASSES} for m in models}
    largest = {m: [] for m in models}
    harm_total = forced_total = 0
    old_total = [0, 0]  # rows the margin rule alone would force, and of them harmful
    verdicts = {"healthy": [0, 0], "slow-large": [0, 0], "slow-small": [0, 0]}  # [flagged or passed, of]
    tmp = tempfile.mkdtemp(prefix="cluster-truth-")
    print("| sweep | machine | model | <= 64 KiB median / worst | 64 KiB-16 MiB | >= 16 MiB | largest size |")
    print("|---|---|---|---|---|---|---|")
    skipped = []
    expect_lines = []
    for path in files:
        head = load_facts(path)
        args = tt_args(head)
        name = os.path.basename(path)[:-4]
        if args is None:
            skipped.append((name, "no bundled topology"))
            continue
        coll = head["collective"]
        per = {}
        feed = path
        if not DIRECT:
            feed = os.path.join(tmp, name + ".nccl-tests.txt")
            write_nccltests(head, head["rows"], feed)
        try:
            for m in models:
                per[m] = expect_rows(tt, args, feed, m, calib if m == "topotune" else None)
        except RuntimeError as e:
            skipped.append((name, str(e)))
            continue
        for m in models:
            cls = {c: [] for c in CLASSES}
            big = max(per[m], key=lambda r: r[0])
            for b, pu, mu, v, cand in per[m]:
                e = abs(pu - mu) / mu
                cls[size_class(b)].append(e)
                pooled[m][size_class(b)].append(e)
            le = abs(big[1] - big[2]) / big[2]
            largest[m].append((le, name))
            cells = []
            for c in CLASSES:
                md, wo = summarize(cls[c])
                cells.append("%s / %s" % (pct(md), pct(wo)) if md is not None else "-")
            print("| %s | %s | %s | %s | %s | %s | %s |" % (name, head["hardware"][:60], m, cells[0], cells[1], cells[2],
                                                             pct(le)))
        # harm: forced rows the model itself predicts slower than what NCCL measured
        try:
            forced, old_forced = forced_rows(tt, args, coll, calib) if os.environ.get("OLD") != "1" else ({}, {})
        except RuntimeError as e:
            skipped.append((name + " (table)", str(e)))
            forced, old_forced = {}, {}
        meas = {b: t for b, t in head["rows"]}
        for b, (cand, pu) in old_forced.items():
            if b in meas:
                old_total[0] += 1
                old_total[1] += pu > meas[b]
        for b, (cand, pu) in forced.items():
            if b in meas:
                forced_total += 1
                if pu > meas[b]:
                    harm_total += 1
                    print("|   harm | %s | forces %s at %d B: predicted %.1f us, NCCL measured %.1f us | | | | |" %
                          (name, cand, b, pu, meas[b]))
        # --expect on the healthy run and on two degraded copies
        sweep_v = {}
        for kind in verdicts:
            if kind == "healthy":
                rows = per["topotune"]
                want = lambda r: True
                ok = lambda v: v == "PASS"
            else:
                big = kind == "slow-large"
                deg = [(b, t / 0.75 if (big and b >= LARGE) else 2 * t if (not big and b <= SMALL) else t)
                       for b, t in head["rows"]]
                dp = os.path.join(tmp, name + "-" + kind + ".txt")
                (write_facts if DIRECT else write_nccltests)(head, deg, dp)
                rows = expect_rows(tt, args, dp, "topotune", calib)
                want = (lambda r: r[0] >= LARGE) if big else (lambda r: r[0] <= SMALL)
                ok = lambda v: v in ("WARN", "FAIL")
            a = b = 0
            for r in rows:
                if want(r):
                    b += 1
                    a += ok(r[3])
            verdicts[kind][0] += a
            verdicts[kind][1] += b
            sweep_v[kind] = (a, b)
        expect_lines.append("| %s | %d / %d | %d / %d | %d / %d |" % (name, sweep_v["healthy"][0], sweep_v["healthy"][1],
                                                                   sweep_v["slow-large"][0], sweep_v["slow-large"][1],
                                                                   sweep_v["slow-small"][0], sweep_v["slow-small"][1]))
    print()
    print("## --expect per sweep (default model): healthy sizes PASS; degraded copies' sizes WARN or FAIL")
    print()
    print("| sweep | healthy PASS | large sizes -25 % bandwidth: flagged | small sizes 2x time: flagged |")
    print("|---|---|---|---|")
    for line in expect_lines:
        print(line)
    print()
    print("## pooled over %d sweeps" % len(largest["topotune"]))
    print()
    print("| model | <= 64 KiB median / worst | 64 KiB-16 MiB | >= 16 MiB | largest size: median / worst (sweep) |")
    print("|---|---|---|---|---|")
    for m in models:
        cells = []
        for c in CLASSES:
            md, wo = summarize(pooled[m][c])
            cells.append("%s / %s (%d rows)" % (pct(md), pct(wo), len(pooled[m][c])) if md is not None else "-")
        lw = max(largest[m]) if largest[m] else (None, "-")
        lm = statistics.median([x[0] for x in largest[m]]) if largest[m] else None
        print("| %s | %s | %s | %s | %s / %s (%s) |" % (m, cells[0], cells[1], cells[2], pct(lm), pct(lw[0]), lw[1]))
    print()
    print("harm: %d of %d forced rows of the default NCCL tables are predicted slower than what NCCL measured" %
          (harm_total, forced_total))
    print("      (the margin rule alone, 15 %%, would force %d measured rows, %d of them predicted slower than what NCCL "
          "measured)" % (old_total[0], old_total[1]))
    for kind, (a, b) in verdicts.items():
        what = "PASS" if kind == "healthy" else "WARN or FAIL"
        print("--expect %-10s: %d of %d sizes %s (%s)" % (kind, a, b, what, pct(a / b) if b else "-"))
    for name, why in skipped:
        print("skipped: %s: %s" % (name, why))


if __name__ == "__main__":
    main()
