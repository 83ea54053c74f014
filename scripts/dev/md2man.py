#!/usr/bin/env python3
"""md2man.py - a man page (roff, man(7) macros) from one of our command references, docs/cli-*.md.

    python3 scripts/dev/md2man.py --name topo-exec --version 0.1.0 docs/cli-topo-exec.md > topo-exec.1

Handles the Markdown the CLI docs use: '#' title, '##'/'###' headings, paragraphs, fenced code,
'-' lists, pipe tables (first column as the tag of .TP), `code`, **bold**, [links](x).
make builds build/man/man1/<tool>.1 with it; make install installs them (no pandoc needed).
"""
import argparse
import datetime
import re
import sys


def esc(text):
    """roff-escape plain text (backslashes, leading dots/quotes handled per line)."""
    return text.replace("\\", "\\e").replace("-", "\\-")


def inline(text):
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)  # links: their text
    out = []
    # `code` and **bold** -> bold; everything else escaped
    for part in re.split(r"(`[^`]*`|\*\*[^*]+\*\*)", text):
        if part.startswith("`") and part.endswith("`") and len(part) >= 2:
            out.append("\\fB" + esc(part[1:-1]) + "\\fR")
        elif part.startswith("**") and part.endswith("**") and len(part) >= 4:
            out.append("\\fB" + esc(part[2:-2].replace("`", "")) + "\\fR")  # code inside bold: bold already
        else:
            out.append(esc(part.replace("`", "")))  # a code span broken over two lines: its marks go
    return "".join(out)


def whatis(summary, name):
    """NAME's one line (what whatis/apropos show): plain text, no fonts, the first sentence's first clause,
    at most 80 characters, without the tool naming itself first ("`topo-dump` scans ..." -> "scans ...")."""
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", summary).replace("**", "").replace("`", "")
    text = re.split(r"(?<=[.])\s", text, maxsplit=1)[0].rstrip(".")
    if text.startswith(name + " "):
        text = text[len(name) + 1:]
    text = re.split(r" \(|; |: ", text, maxsplit=1)[0].rstrip(",")
    if len(text) > 80:
        text = text[:80].rsplit(" ", 1)[0]
    return text[:1].lower() + text[1:]


def line_safe(s):
    """a line must not start with '.' or "'" (control characters)."""
    return "\\&" + s if s.startswith((".", "'")) else s


def table_cells(row):
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|"):
        row = row[:-1]
    # '|' inside `code` is not a separator
    cells, cur, code = [], "", False
    for ch in row:
        if ch == "`":
            code = not code
        if ch == "|" and not code:
            cells.append(cur.strip())
            cur = ""
        else:
            cur += ch
    cells.append(cur.strip())
    return cells


def convert(md, name, version):
    out = []
    lines = md.splitlines()
    date = datetime.date.today().isoformat()
    out.append('.TH "%s" "1" "%s" "topotune %s" "topotune manual"' % (name.upper(), date, version))
    summary = ""
    i = 0
    # title line, then the first paragraph becomes NAME's one-liner
    while i < len(lines) and not lines[i].startswith("# "):
        i += 1
    i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    para = []
    while i < len(lines) and lines[i].strip() and not lines[i].startswith(("#", "```", "|")):
        para.append(lines[i].strip())
        i += 1
    summary = " ".join(para)
    out.append(".SH NAME")
    out.append(line_safe("%s \\- %s" % (esc(name), esc(whatis(summary, name)))))
    out.append(".SH DESCRIPTION")
    if summary:
        out.append(line_safe(inline(summary)))
    in_code = False
    header_seen = False
    while i < len(lines):
        ln = lines[i]
        i += 1
        if ln.startswith("```"):
            if not in_code:
                out.append(".PP")
                out.append(".nf")
                out.append(".RS 2")
            else:
                out.append(".RE")
                out.append(".fi")
            in_code = not in_code
            continue
        if in_code:
            out.append(line_safe(esc(ln)))
            continue
        if ln.startswith("## "):
            out.append(".SH " + inline(ln[3:].strip()).upper())
            continue
        if ln.startswith("### ") or ln.startswith("#### "):
            out.append(".SS " + inline(ln.lstrip("#").strip()))
            continue
        if ln.startswith("|"):
            cells = table_cells(ln)
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue  # the separator row
            if not header_seen:
                header_seen = True  # the header row: skip (the rows speak for themselves)
                continue
            out.append(".TP")
            out.append(line_safe(inline(cells[0])))
            out.append(line_safe(" \\(em ".join(inline(c) for c in cells[1:] if c)))
            continue
        header_seen = False if not ln.startswith("|") else header_seen
        if re.match(r"^\s*[-*] ", ln):
            out.append(".IP \\(bu 2")
            out.append(line_safe(inline(re.sub(r"^\s*[-*] ", "", ln).strip())))
            continue
        if not ln.strip():
            out.append(".PP")
            continue
        out.append(line_safe(inline(ln.strip())))
    out.append(".SH SEE ALSO")
    others = [t for t in ("topo-dump", "topo-tune", "topo-exec") if t != name]
    out.append(", ".join("\\fB%s\\fR(1)" % t for t in others))
    # collapse runs of .PP
    res = []
    for ln in out:
        if ln == ".PP" and res and res[-1] in (".PP", ".SH DESCRIPTION") or (ln == ".PP" and res and res[-1].startswith((".SH", ".SS"))):
            continue
        res.append(ln)
    return "\n".join(res) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--version", default="")
    ap.add_argument("markdown")
    a = ap.parse_args()
    with open(a.markdown, encoding="utf-8") as f:
        md = f.read()
    sys.stdout.write(convert(md, a.name, a.version))


if __name__ == "__main__":
    main()
