#!/usr/bin/env python3
"""plot-busbw.py - bus bandwidth against message size (measured, predicted, NCCL) as a PNG/SVG/PDF.

    scripts/plot-busbw.py ours.json [nccl.txt | nccl.json ...] -o busbw.png [--title T] [--in-place]

Reads any mix of:
  * topo-exec -J JSON (also all_reduce_perf & co., the drop-in): the measured curve, and the
    topotune model's predicted curve where the rows carry "predicted_time" (topo-exec --predict);
    a run of topo-exec --engine nccl is drawn as NCCL;
  * nccl-tests text output (all_reduce_perf > out.txt; also topo-exec's own table) and nccl-tests
    -J JSON: drawn as NCCL unless the file is topotune's (its first line, or "tool": "topo-exec").
--nccl FILE marks a file as NCCL's, --measured FILE as ours, whatever it looks like.

Drawing is matplotlib's (python3-matplotlib on Debian/Ubuntu, or pip install matplotlib); x is
log2 of the size in bytes, y the busbw in GB/s of the out-of-place placement (--in-place: in place).
Exit 0, 2 on bad input, 3 without matplotlib.
"""
import argparse
import json
import os
import sys


def busbw_factor(coll, n):
    """nccl-tests' busbw factors (peers.md 1.5), used for predicted times."""
    if coll in ("all_reduce", "allreduce"):
        return 2.0 * (n - 1) / n
    if coll in ("all_gather", "reduce_scatter", "allgather", "reducescatter"):
        return (n - 1) / n
    return 1.0


def read_json(path, place):
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    if "results" not in j:
        raise ValueError("%s: no \"results\" (not topo-exec or nccl-tests -J output)" % path)
    ours = j.get("tool") == "topo-exec"
    cfg = j.get("config", {})
    nccl = (not ours) or cfg.get("transport") == "nccl"
    meas, pred = [], []
    for r in j["results"]:
        p = r.get(place) or {}
        size, bw = r.get("size"), p.get("bus_bw")
        if not isinstance(size, (int, float)) or not isinstance(bw, (int, float)) or size <= 0:
            continue
        meas.append((size, bw))
        t, pt = p.get("time"), p.get("predicted_time")
        if isinstance(t, (int, float)) and isinstance(pt, (int, float)) and t > 0 and pt > 0:
            pred.append((size, bw * t / pt))  # the same bytes moved in the predicted time
    return {"kind": "nccl" if nccl else "measured", "points": meas, "pred": pred}


def read_text(path, place):
    ours = False
    meas, pred, has_pred = [], [], False
    with open(path, encoding="utf-8", errors="replace") as f:
        for i, line in enumerate(f):
            # launcher prefixes: "[1,0]<stdout>:" (Open MPI --tag-output), "0: " (srun -l)
            if line.startswith("[") and ">:" in line:
                line = line.split(">:", 1)[1]
            elif line[:1].isdigit() and ": " in line[:8] and line.split(":", 1)[0].strip().isdigit():
                line = line.split(": ", 1)[1]
            s = line.strip()
            if s.startswith("#"):
                if "topotune" in s or "topo-exec" in s:
                    ours = True
                if "#wrong" in s and "pred" in s:
                    has_pred = True
                continue
            f_ = s.split()
            if len(f_) < 13 or not f_[0].isdigit():
                continue
            per = 6 if has_pred else 4
            base = 5 + (per if place == "in_place" else 0)
            try:
                size, t, bw = float(f_[0]), float(f_[base]), float(f_[base + 2])
            except (ValueError, IndexError):
                continue
            if size <= 0:
                continue
            meas.append((size, bw))
            if has_pred:
                try:
                    pt = float(f_[base + 4])
                    if pt > 0 and t > 0:
                        pred.append((size, bw * t / pt))
                except (ValueError, IndexError):
                    pass
    if not meas:
        raise ValueError("%s: no result rows (not nccl-tests or topo-exec output)" % path)
    return {"kind": "measured" if ours else "nccl", "points": meas, "pred": pred}


def read_any(path, place):
    with open(path, "rb") as f:
        head = f.read(64).lstrip()
    if head.startswith(b"{"):
        return read_json(path, place)
    return read_text(path, place)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="topo-exec/nccl-tests output (text or -J JSON)")
    ap.add_argument("--nccl", action="append", default=[], help="a file to draw as NCCL")
    ap.add_argument("--measured", action="append", default=[], help="a file to draw as measured (ours)")
    ap.add_argument("-o", "--output", required=True, help="image file (.png, .svg, .pdf)")
    ap.add_argument("--title", default="Bus bandwidth against message size")
    ap.add_argument("--in-place", action="store_true", help="the in-place placement instead of out-of-place")
    a = ap.parse_args()
    place = "in_place" if a.in_place else "out_of_place"
    items = [(p, None) for p in a.files] + [(p, "nccl") for p in a.nccl] + [(p, "measured") for p in a.measured]
    if not items:
        ap.error("no input file")
    curves = []
    for path, force in items:
        try:
            c = read_any(path, place)
        except (OSError, ValueError, json.JSONDecodeError) as e:
            print("plot-busbw: %s" % e, file=sys.stderr)
            return 2
        c["kind"] = force or c["kind"]
        c["name"] = os.path.basename(path)
        curves.append(c)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        print("plot-busbw: matplotlib is not installed (apt-get install python3-matplotlib, or pip install matplotlib)",
              file=sys.stderr)
        return 3

    def human(x, _pos=None):
        for unit in ("B", "K", "M", "G", "T"):
            if x < 1024:
                return "%g%s" % (x, unit)
            x /= 1024.0
        return "%gP" % x

    fig, ax = plt.subplots(figsize=(9, 5.5), layout="constrained")
    style = {"measured": dict(marker="o", linestyle="-"), "nccl": dict(marker="s", linestyle="-"),
             "predicted": dict(marker="", linestyle="--")}
    label = {"measured": "measured", "nccl": "NCCL", "predicted": "predicted (topotune model)"}
    for c in curves:
        pts = sorted(c["points"])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label="%s: %s" % (label[c["kind"]], c["name"]),
                **style[c["kind"]])
        if c["pred"]:
            pp = sorted(c["pred"])
            ax.plot([p[0] for p in pp], [p[1] for p in pp], label="%s: %s" % (label["predicted"], c["name"]),
                    **style["predicted"])
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(human))
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s, %s)" % place.replace("_", "-"))
    ax.set_title(a.title)
    ax.grid(True, which="major", alpha=0.4)
    ax.legend(loc="upper left", fontsize="small")
    fig.savefig(a.output, dpi=110)
    print("plot-busbw: wrote %s (%d curve(s))" % (a.output, sum(1 + bool(c["pred"]) for c in curves)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
