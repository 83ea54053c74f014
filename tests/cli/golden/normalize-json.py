#!/usr/bin/env python3
"""normalize-json.py FILE - a drop-in's -J file checked for nccl-tests' form and printed with what
changes from run to run masked (tests/cli/test_perf_golden.sh compares it with golden/*.json).

Checked on the raw bytes (exit 1 naming the problem): one line, no final newline, no space outside
strings, every number an integer or a double with six decimals (nccl-tests' "%d"/"%zu" and "%lf").
Printed: the document with its keys in their order, one value per line; every double as "<double>"
(the type kept: an integer where a double belongs, or the reverse, differs from the golden file),
nwrong as "<double N>", start_time/end_time as "<time>", pid as "<pid>", hostname as "<host>" (each
only when of nccl-tests' type), file names in args by their base names,
env as ["<env>"] (the entries depend on the caller's environment)."""
import json
import os
import re
import sys

TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[{}\[\]:,]|\s+|true|false|null|.')


def check_raw(raw):
    if raw.endswith("\n"):
        return "a final newline (nccl-tests writes none)"
    for m in TOKEN.finditer(raw):
        t = m.group(0)
        if t.isspace():
            return "white space outside strings at byte %d (nccl-tests writes one line without spaces)" % m.start()
        if t[0] in "-0123456789":
            if "e" in t.lower() or ("." in t and not re.fullmatch(r"-?\d+\.\d{6}", t)):
                return "number %s at byte %d is neither an integer nor a double with six decimals" % (t, m.start())
    return None


def masked(v, want, name):
    """name for a value of the type wanted, else a note that fails the comparison"""
    return "<%s>" % name if isinstance(v, want) and not isinstance(v, bool) else "<%s NOT A %s: %r>" % (
        name, want.__name__, v)


def mask(v, key):
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float):
        return "<double %g>" % v if key == "nwrong" else "<double>"
    if key in ("start_time", "end_time"):
        return masked(v, str, "time")
    if key == "pid":
        return masked(v, int, "pid")
    if key == "hostname":
        return masked(v, str, "host")
    if isinstance(v, dict):
        return {k: mask(x, k) for k, x in v.items()}
    if isinstance(v, list):
        if key == "env":
            return ["<env>"] if all(isinstance(e, str) for e in v) else [mask(x, "") for x in v]
        out = [mask(x, "") for x in v]
        if key == "args":  # the program and the -J file by their base names
            out = [os.path.basename(x) if isinstance(x, str) else x for x in out]
        return out
    return v


def main():
    raw = open(sys.argv[1], encoding="utf-8").read()
    bad = check_raw(raw)
    if bad:
        print("%s: %s" % (sys.argv[1], bad))
        return 1
    doc = json.loads(raw, parse_float=float)
    print(json.dumps(mask(doc, ""), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
