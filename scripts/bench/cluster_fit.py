#!/usr/bin/env python3
"""cluster_fit.py - fit the default model's shared constants to the published corpus.

    python3 scripts/bench/cluster_fit.py [--cv K] [--rounds R] [FILES...]

What is fitted (docs/model.md "Where the constants come from"): ONE set of constants for every
sweep of tests/fixtures/published/ (never a constant per sweep): the launch latency and the
in-node step cost of each protocol, the NVLink hop and the NVLS step, the pipeline overhead of
medium sizes, and per fabric one network-hop latency (the protocols add a shared offset to it) and
one bandwidth efficiency.  The objective is the time error of NCCL's own choice (|log(pred/meas)|):
per size class (<= 64 KiB, 64 KiB-16 MiB, >= 16 MiB) its median plus half its 90th percentile,
summed over the classes.  Minimiser: coordinate search in log space, step halving.

--cv K: K-fold cross-validation by sweep (fit on K-1 folds, predict the held-out one) and print the
held-out errors, the honest figure of what the constants do on clusters they were not fitted on.
The fitted constants are printed as a calibration file (stdout) and as the C initialisers of
tune/tune_params.c (stderr).
"""
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_truth as ct  # noqa: E402

FABRICS = ("ib", "roce", "efa", "tcpx")

# name, start, lo, hi
PARAMS = [
    ("base_LL", 5.0, 1.0, 25.0), ("base_LL128", 6.0, 1.0, 25.0), ("base_Simple", 6.5, 1.0, 25.0),
    ("step_LL", 0.0, 0.0, 10.0), ("step_LL128", 0.5, 0.0, 10.0), ("step_Simple", 2.0, 0.0, 20.0),
    ("nvl_alpha", 0.7, 0.05, 5.0), ("nvls_alpha", 6.0, 0.5, 40.0),
    ("pipe_LL", 1.3, 0.0, 50.0), ("pipe_LL128", 1.3, 0.0, 50.0), ("pipe_Simple", 1.3, 0.0, 50.0), ("pipe_cap", 8.0, 0.5, 100.0),
    ("hop_ib", 4.0, 0.5, 100.0), ("hop_roce", 5.0, 0.5, 100.0), ("hop_efa", 20.0, 0.5, 200.0), ("hop_tcpx", 30.0, 0.5, 300.0),
    ("d_LL128", 1.0, 0.0, 50.0), ("d_Simple", 4.0, 0.0, 80.0),
    ("eff_ib", 0.94, 0.3, 1.0), ("eff_roce", 0.90, 0.3, 1.0), ("eff_efa", 0.80, 0.3, 1.0), ("eff_tcpx", 0.90, 0.3, 1.0),
    ("efa_pre_sm90", 2.5, 1.0, 10.0), ("group_launch", 2.4, 0.0, 20.0),
]


def calib_json(v):
    fab = {}
    for f in FABRICS:
        h = v["hop_" + f]
        fab[f] = {"hop_LL_us": h, "hop_LL128_us": h + v["d_LL128"], "hop_Simple_us": h + v["d_Simple"],
                  "efficiency": min(1.0, v["eff_" + f])}
    fab["efa"]["hop_scale_pre_sm90"] = v["efa_pre_sm90"]
    nccl = {"pipeline_cap": v["pipe_cap"]}
    for p in ("LL", "LL128", "Simple"):
        nccl[p] = {"base_us": v["base_" + p], "step_us": v["step_" + p], "pipeline": v["pipe_" + p]}
    return {"schema": "topotune-calibration", "version": 1, "links": {"NVL": {"alpha_us": v["nvl_alpha"]}},
            "fabrics": fab, "nccl": nccl, "nvls": {"alpha_us": v["nvls_alpha"]},
            "group_launch_us": v["group_launch"],
            "comment": "cluster_fit.py on the published corpus"}


class Corpus:
    def __init__(self, files, tt, tmp):
        self.sweeps = []
        self.meta = {}
        for path in files:
            head = ct.load_facts(path)
            args = ct.tt_args(head)
            if args is None:
                continue
            feed = path
            if not ct.DIRECT:
                feed = os.path.join(tmp, os.path.basename(path) + ".nt")
                ct.write_nccltests(head, head["rows"], feed)
            self.sweeps.append((os.path.basename(path)[:-4], args, feed))
            self.meta[os.path.basename(path)[:-4]] = (int(head["nodes"]), fabric_of(tt, args))
        self.tt = tt
        self.tmp = tmp

    def errors(self, v, which=None):
        """{sweep: [(bytes, log error)]} for the sweeps `which` (indices; None = all)."""
        cal = os.path.join(self.tmp, "cal-%d-%d.json" % (os.getpid(), random.randrange(1 << 30)))
        with open(cal, "w") as f:
            json.dump(calib_json(v), f)
        idx = range(len(self.sweeps)) if which is None else which

        def one(i):
            name, args, feed = self.sweeps[i]
            try:
                rows = ct.expect_rows(self.tt, args, feed, "topotune", cal)
            except RuntimeError:
                return name, None
            return name, [(b, math.log(pu / mu)) for b, pu, mu, _, _ in rows]

        with ThreadPoolExecutor(max_workers=2) as ex:
            out = dict(ex.map(one, idx))
        os.unlink(cal)
        return out


def fabric_of(tt, args):
    """the fabric topo-tune uses for the machine (its JSON table's topology.fabric)"""
    p = subprocess.run([tt] + args + ["-f", "json", "-C", "allreduce", "--max-size", "8"], capture_output=True, text=True)
    try:
        return json.loads(p.stdout)["topology"].get("fabric", {}).get("name", "-")
    except (ValueError, KeyError):
        return "-"


TRUST_MIN_SWEEPS, TRUST_MIN_ROWS = 2, 6


def trust_rows(errs, meta):
    """the C rows of tune/tune_trust.c from held-out errors: per (nodes 1/2/3+, fabric, size class)"""
    reg = {}
    for name, rows in errs.items():
        nodes, fab = meta[name]
        nc = 1 if nodes == 1 else 2 if nodes == 2 else 3
        for b, e in rows or []:
            key = (nc, "-" if nc == 1 else fab, ct.size_class(b))
            reg.setdefault(key, {}).setdefault(name, []).append(abs(math.exp(e) - 1))
    out = []
    for (nc, fab, cls), per in sorted(reg.items()):
        x = sorted(v for r in per.values() for v in r)
        if len(per) < TRUST_MIN_SWEEPS or len(x) < TRUST_MIN_ROWS:
            continue
        out.append("    {%d, %s, TT_SIZE_%s, %d, %.3f, %.3f, %.3f}, /* %d rows */" %
                   (nc, "-1" if fab == "-" else "TT_FABRIC_" + fab.upper(), cls.upper(), len(per), statistics.median(x),
                    x[int(0.9 * (len(x) - 1))], x[-1], len(x)))
    return out


def score(errs):
    cls = {c: [] for c in ct.CLASSES}
    for rows in errs.values():
        if rows is None:
            return 1e9
        for b, e in rows:
            cls[ct.size_class(b)].append(abs(e))
    s = 0
    for c in ct.CLASSES:
        x = sorted(cls[c])
        if x:
            s += statistics.median(x) + 0.5 * x[int(0.9 * (len(x) - 1))]
    return s


PRIOR = {p[0]: p[1] for p in PARAMS}  # the starting values: physically motivated, NCCL's own where it has one
LAMBDA = float(os.environ.get("PRIOR_WEIGHT", "0.003"))


def penalty(v):
    """a weak pull towards the starting values, so that constants the corpus cannot tell apart stay put"""
    s = 0
    for k, x in v.items():
        p0 = PRIOR.get(k, 0)
        if p0 > 0 and x > 0:
            s += math.log(x / p0) ** 2
    return LAMBDA * s


def fit(corpus, which, v0, rounds):
    v = dict(v0)
    best = score(corpus.errors(v, which)) + penalty(v)
    step = {p[0]: 0.4 for p in PARAMS}
    for r in range(rounds):
        improved = False
        for name, _, lo, hi in PARAMS:
            for direction in (1, -1):
                x = v[name]
                if x <= 0 and direction < 0:
                    continue
                nx = x * math.exp(direction * step[name]) if x > 0 else (lo + hi) * 0.01
                nx = min(max(nx, lo), hi)
                if nx == x:
                    continue
                v[name] = nx
                s = score(corpus.errors(v, which)) + penalty(v)
                if s < best - 1e-6:
                    best = s
                    improved = True
                    break
                v[name] = x
            else:
                step[name] *= 0.6
        print("round %d: objective %.4f" % (r + 1, best), file=sys.stderr)
        if not improved and max(step.values()) < 0.02:
            break
    return v, best


def report(errs, label):
    cls = {c: [] for c in ct.CLASSES}
    for rows in errs.values():
        for b, e in rows or []:
            cls[ct.size_class(b)].append(abs(math.exp(e) - 1))
    parts = []
    for c in ct.CLASSES:
        x = sorted(cls[c])
        parts.append("%s median %.1f %% p90 %.1f %% worst %.0f %% (%d rows)" %
                     (c, 100 * statistics.median(x), 100 * x[int(0.9 * (len(x) - 1))], 100 * x[-1], len(x)))
    print("%s: %s" % (label, "; ".join(parts)), file=sys.stderr)


def main():
    args = sys.argv[1:]
    cv = 0
    rounds = 12
    while args and args[0].startswith("--"):
        if args[0] == "--cv":
            cv = int(args[1])
            args = args[2:]
        elif args[0] == "--rounds":
            rounds = int(args[1])
            args = args[2:]
        else:
            raise SystemExit("unknown option " + args[0])
    files = args
    if not files:
        d = os.path.join(ct.FIX, "published")
        files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".txt"))
    tt = os.environ.get("TOPOTUNE", os.path.join(ct.ROOT, "build", "bin", "topo-tune"))
    tmp = tempfile.mkdtemp(prefix="cluster-fit-")
    corpus = Corpus(files, tt, tmp)
    v0 = {p[0]: p[1] for p in PARAMS}
    if os.environ.get("START"):
        v0.update(json.load(open(os.environ["START"])))
    report(corpus.errors(v0), "start")
    v, best = fit(corpus, None, v0, rounds)
    report(corpus.errors(v), "fitted on all %d sweeps" % len(corpus.sweeps))
    if cv:
        n = len(corpus.sweeps)
        order = list(range(n))
        random.Random(1).shuffle(order)
        held = {}
        for k in range(cv):
            test = [order[i] for i in range(n) if i % cv == k]
            train = [order[i] for i in range(n) if i % cv != k]
            vk, _ = fit(corpus, train, v, max(3, rounds // 2))
            held.update(corpus.errors(vk, test))
        report(held, "%d-fold cross-validation (held-out sweeps)" % cv)
        print("trust rows (tune/tune_trust.c), from the held-out errors:", file=sys.stderr)
        for r in trust_rows(held, corpus.meta):
            print(r, file=sys.stderr)
    json.dump({k: round(x, 4) for k, x in v.items()}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
