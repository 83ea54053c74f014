#!/usr/bin/env python3
"""Write the seed corpus of tests/fuzz/fuzz_plugin_table.c (the tuner plugin's table reader).

    scripts/dev/fuzz-plugin-seeds.py [DIR]         small seeds (default tests/fuzz/corpus/fuzz_plugin_table)
    scripts/dev/fuzz-plugin-seeds.py --big DIR     the three big inputs of tests/unit/test_fuzz_replay.c
                                                   (test_replay_plugin_table_big), as files, to time them

The first byte of each input picks the reader (0 JSON, 1 CSV, 2 the file loader: BOM, blank, sniffing).
Small valid tables of each form; and, with --big, inputs of about 1-2 MB on which the quadratic checks of
the plugin before issue #32 took seconds, over the target's time budget: an object of 60000 members, a
table set of 20000 shapes, a CSV of 80000 shapes.  Our own inputs, written here.
"""
import json
import os
import sys

big = len(sys.argv) > 1 and sys.argv[1] == "--big"
args = sys.argv[2:] if big else sys.argv[1:]
out = args[0] if args else "tests/fuzz/corpus/fuzz_plugin_table"
os.makedirs(out, exist_ok=True)


def put(name, how, text):
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes([how]) + text.encode())


def entry(coll, lo, hi, algo, proto, ch=None):
    e = {"collective": coll, "min_bytes": lo, "max_bytes": hi, "algorithm": algo, "protocol": proto}
    if ch is not None:
        e["channels"] = ch
    return e


def table(ranks, nodes, entries):
    return {"schema": "topotune-tuning-table", "version": 1, "nodes": nodes, "ranks": ranks,
            "model": "topotune", "entries": entries}


if not big:
    small = table(8, 1, [entry("allreduce", 0, 65535, "ring", "ll"), entry("allreduce", 65536, 1 << 40, "tree", "simple", 4),
                         entry("allgather", 0, 1 << 30, "ring", "ll128", 0)])
    put("json-table", 0, json.dumps(small, indent=1))
    put("json-set", 0, json.dumps({"schema": "topotune-tuning-table-set", "version": 1,
                                   "tables": [table(8, 1, small["entries"]), table(16, 2, small["entries"][:1])]}))
    put("load-bom-json", 2, "\ufeff" + json.dumps(small))
    put("load-csv", 2, "allreduce,0,65535,ring,ll,-1,1,8\nallreduce,65536,1099511627776,tree,simple,4,-1,-1,-1,-1\n")
    put("csv-rows", 1, "# comment\nallreduce,0,1024,tree,ll,2,2,16\nbroadcast,0,4096,ring,simple,-1,-1,-1,1\n")
    put("load-blank", 2, "  \n\t\n")
    put("json-escapes", 0, '{"schema":"topotune-tuning-table","version":1,"nodes":1,"ranks":2,"model":"a\\u00e9\\ud83d\\ude00","entries":[]}')

if big:
    # one object of 60000 members (the old reader compared every member name with every earlier one)
    members = ",".join('"k%d":%d' % (i, i) for i in range(60000))
    put("big-json-members", 0, '{"schema":"topotune-tuning-table","version":1,"nodes":1,"ranks":8,"entries":[],%s}' % members)
    # a table set of 20000 shapes (the old shape check compared every table with every earlier one)
    tabs = ",".join('{"nodes":%d,"ranks":%d,"entries":[]}' % (1 + i // 1000, (1 + i // 1000) * (1 + i % 1000))
                    for i in range(20000))
    put("big-json-set", 0, '{"schema":"topotune-tuning-table-set","version":1,"tables":[%s]}' % tabs)
    # a CSV of 80000 shapes (the old list of shapes was quadratic)
    rows = "".join("allreduce,0,1099511627776,ring,simple,-1,%d,%d\n" % (1 + i // 1000, (1 + i // 1000) * (1 + i % 1000))
                   for i in range(80000))
    put("big-csv-shapes", 1, rows)
