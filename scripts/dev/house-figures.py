#!/usr/bin/env python3
"""house-figures.py - the figures of the house that docs/architecture.md quotes, measured from the tree.

  house-figures.py [ROOT]                 print the figures (a markdown block)
  house-figures.py --check DOC [ROOT]     exit 1 naming each line where DOC's block differs from the tree
  house-figures.py --write DOC [ROOT]     rewrite DOC's block from the tree

The block sits between the lines '<!-- house-figures: begin -->' and '<!-- house-figures: end -->'.
The exported-symbol count needs a built libtopotune.so (BUILD, default build/); `make check` builds it
first and runs --check (tests/cli/test_house_figures.sh), so the document cannot drift from the code.
"""
import glob, os, re, subprocess, sys

BEGIN = "<!-- house-figures: begin -->"
END = "<!-- house-figures: end -->"
MODULES = ["common", "xml", "topo", "tune", "exec", "plugin", "bin"]
SRC_EXT = (".c", ".h", ".cu", ".cuh")
BIN_FN_LIMIT = 120  # issue #31: no function of bin/ over this many lines


def sources(mod):
    return sorted(f for f in glob.glob(mod + "/*") if f.endswith(SRC_EXT))


def nlines(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        return sum(1 for _ in fh)


def strip(text):
    """Comments and string/char literals blanked, newlines kept (so line numbers stay)."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    text = re.sub(r"/\*.*?\*/", blank, text, flags=re.S)
    text = re.sub(r"//[^\n]*", blank, text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', blank, text)
    return re.sub(r"'(\\.|[^'\\\n])*'", blank, text)


def functions(path):
    """(name, first line, lines) of every function defined at file scope."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = strip(fh.read())
    text = re.sub(r"^[ \t]*#[^\n]*", lambda m: " " * len(m.group(0)), text, flags=re.M)
    out, depth, head_start, start = [], 0, 0, None
    line = 1
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch == "{":
            if depth == 0:
                head = text[head_start:i]
                m = re.search(r"([A-Za-z_]\w*)\s*\([^;{}=]*\)\s*(__attribute__\s*\(\(.*\)\)\s*)?$", head, re.S)
                if m and not re.search(r"\b(struct|union|enum)\s*\w*\s*$", head) and "=" not in head.split(")")[-1]:
                    start = (m.group(1), text.count("\n", 0, head_start + m.start(1)) + 1)
                else:
                    start = None
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if start:
                    out.append((start[0], start[1], line - start[1] + 1))
                start, head_start = None, i + 1
        elif ch == ";" and depth == 0:
            head_start = i + 1
    return out


def exports(build):
    so = os.path.join(build, "lib", "libtopotune.so")
    if not os.path.exists(so):
        return None
    out = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True).stdout
    syms = [l.split()[-1] for l in out.splitlines() if len(l.split()) == 3 and l.split()[1] in "TtWi"]
    return len(syms), sum(1 for s in syms if s.startswith("tt_"))


def figures(root, build):
    os.chdir(root)
    rows = []
    lines = {m: sum(nlines(f) for f in sources(m)) for m in MODULES}
    total = sum(lines.values())
    rows.append("| figure | value |")
    rows.append("|---|---|")
    for m in MODULES:
        rows.append("| `%s/`: files, lines | %d, %s |" % (m, len(sources(m)), format(lines[m], ",")))
    rows.append("| `bin/` share of all C/CUDA source | %.1f %% of %s lines |" % (100.0 * lines["bin"] / total,
                                                                           format(total, ",")))
    fns = [(n, f, l, s) for f in sources("bin") if f.endswith((".c", ".h")) for (n, l, s) in functions(f)]
    fns.sort(key=lambda x: -x[3])
    if fns:
        n, f, l, s = fns[0]
        rows.append("| longest function in `bin/` | `%s` (%s), %d lines |" % (n, f, s))
    rows.append("| functions in `bin/` over %d lines | %d |" % (BIN_FN_LIMIT, sum(1 for x in fns if x[3] > BIN_FN_LIMIT)))
    pub = sorted(h for m in MODULES[:5] for h in glob.glob(m + "/tt_*.h"))
    rows.append("| public headers | %d: %s |" % (len(pub), ", ".join("`%s`" % h for h in pub)))
    ex = exports(build)
    if ex:
        rows.append("| functions `libtopotune.so` exports | %d (%d named `tt_*`) |" % ex)
    else:
        rows.append("| functions `libtopotune.so` exports | (not built) |")
    getenv = sorted(f for m in MODULES[:6] for f in sources(m) if re.search(r"\bgetenv\s*\(", strip(open(f).read())))
    rows.append("| library files calling `getenv` | %d |" % len(getenv))
    setenv = sum(len(re.findall(r"\b(?:un)?setenv\s*\(", strip(open(f).read()))) for f in sources("bin"))
    rows.append("| `setenv`/`unsetenv` calls in `bin/` | %d |" % setenv)
    return "\n".join(rows) + "\n"


def block_of(doc):
    text = open(doc).read()
    if BEGIN not in text or END not in text:
        sys.exit("house-figures: %s has no '%s' ... '%s' block" % (doc, BEGIN, END))
    a = text.index(BEGIN) + len(BEGIN) + 1
    return text, a, text.index(END)


def main(argv):
    mode, doc = None, None
    if argv and argv[0] in ("--check", "--write"):
        if len(argv) < 2:
            sys.exit(__doc__)
        mode, doc, argv = argv[0], os.path.abspath(argv[1]), argv[2:]
    root = argv[0] if argv else "."
    build = os.path.abspath(os.path.join(root, os.environ.get("BUILD", "build")))
    now = figures(root, build)
    if not mode:
        sys.stdout.write(now)
        return 0
    text, a, b = block_of(doc)
    if mode == "--write":
        open(doc, "w").write(text[:a] + now + text[b:])
        return 0
    have = text[a:b].splitlines()
    want = now.splitlines()
    bad = 0
    for i in range(max(len(have), len(want))):
        h = have[i] if i < len(have) else "(nothing)"
        w = want[i] if i < len(want) else "(nothing)"
        if h != w:
            print("%s: house figures line %d says %s; the tree says %s" % (doc, i + 1, h, w))
            bad += 1
    print("house-figures: %d line(s) differ (rewrite with: scripts/dev/house-figures.py --write docs/architecture.md)"
          % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
