#!/usr/bin/env python3
"""house-check.py ROOT - the rules of the house that the compiler does not check (docs/contributing.md):
prints one line per breach and exits 1 when there is any.
  - prototypes live in headers: no file-scope function declaration in a .c/.cu file
  - no weak-symbol hooks
  - one public header per module (tt_<module>.h; exec also has the header-only tt_exec_mpi.h)
  - the layering, as includes: common <- xml <- topo <- tune; common <- exec
"""
import glob, os, re, sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
os.chdir(root)
bad = []
MODULES = ["common", "xml", "topo", "tune", "exec"]
SEES = {"common": {"common"}, "xml": {"common", "xml"}, "topo": {"common", "xml", "topo"},
        "tune": {"common", "xml", "topo", "tune"}, "exec": {"common", "exec"}}
PUBLIC = {"common/tt_common.h", "xml/tt_xml.h", "topo/tt_topo.h", "tune/tt_tune.h", "exec/tt_exec.h",
          "exec/tt_exec_mpi.h"}
owner = {}  # header name -> module
for m in MODULES:
    for h in glob.glob(m + "/*.h") + glob.glob(m + "/*.cuh"):
        owner[os.path.basename(h)] = m

def strip(s):
    s = re.sub(r"/\*.*?\*/", "", s, flags=re.S)
    s = re.sub(r"//[^\n]*", "", s)
    return re.sub(r'"(\\.|[^"\\])*"', '""', s)

srcs = sorted(f for d in MODULES + ["bin", "plugin"] for f in glob.glob(d + "/*.c") + glob.glob(d + "/*.cu"))
for f in srcs:
    text = open(f, encoding="utf-8", errors="replace").read()
    s = strip(text)
    depth, stmt, line, start = 0, "", 1, 1
    for ch in s:
        if ch == "\n":
            line += 1
            if stmt.strip().startswith("#"):
                stmt = ""
        if ch == "{":
            depth += 1; stmt = ""; continue
        if ch == "}":
            depth -= 1; stmt = ""; continue
        if depth == 0:
            if not stmt.strip():
                start = line
            stmt += ch
            if ch == ";":
                t = " ".join(stmt.split())
                if ("(" in t and not t.startswith(("typedef", "static")) and
                        re.match(r"^(extern\s+)?[A-Za-z_][\w\s\*]*\b\w+\s*\(", t)):
                    bad.append("%s:%d: a prototype in a .c file (put it in a header): %s" % (f, start, t[:90]))
                stmt = ""
    if "__attribute__((weak))" in s or "#pragma weak" in s:
        bad.append("%s: a weak-symbol hook (declare it in a header and link normally)" % f)
    m = f.split("/")[0]
    if m in SEES:
        for inc in re.findall(r'#\s*include\s+"([^"]+)"', text):
            o = owner.get(os.path.basename(inc))
            if o and o not in SEES[m]:
                bad.append("%s: includes %s of module %s (layering: %s sees %s)" % (f, inc, o, m, ", ".join(sorted(SEES[m]))))
for h in sorted(glob.glob("*/tt_*.h")):
    if h not in PUBLIC:
        bad.append("%s: a second public header in its module (fold it into the module's tt_<module>.h)" % h)
for b in bad:
    print(b)
print("house-check: %d source files, %d breach(es)" % (len(srcs), len(bad)))
sys.exit(1 if bad else 0)
