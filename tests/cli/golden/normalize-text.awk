# normalize-text.awk - a drop-in's standard output with what changes from run to run masked, every
# other byte kept (tests/cli/test_perf_golden.sh compares it with tests/cli/golden/*.txt).
#   -J file      "# Writing JSON output to DIR/F"               -> "# Writing JSON output to F"
#   version      "topotune.X.Y.Z" of "# nccl-tests version"     -> "topotune.VERSION"
#   rank lines   Pid (6 columns) and host (10 columns, or a longer name)  -> "PPPPPP", "HHHHHHHHHH" (a
#                field out of nccl-tests' widths is left as it is and fails the comparison)
#   rows         time (7 columns), algbw and busbw (6 each) of both placements -> TTTTTTT, AAAAAA, BBBBBB,
#                with -I also i_min i_max i_p99 i_cv% (7 each) -> mmmmmmm MMMMMMM ppppppp ccccccc; only in a
#                row of nccl-tests' widths (118, with -I 190): any other width is left as it is
#   average      the "%g" of "# Avg bus bandwidth    : X "  -> "AVG" (the space after it kept)
{
    line = $0
    if (line ~ /^# Writing JSON output to .*\//)
        sub(/to .*\//, "to ", line)
    if (line ~ /^# nccl-tests version /)
        sub(/\+topotune\.[0-9]+\.[0-9]+\.[0-9]+/, "+topotune.VERSION", line)
    if (line ~ /^#  Rank /) {
        p = index(line, " Pid ")
        q = index(line, " device ")
        if (p && q) {
            pid = substr(line, p + 5, 6)
            host = substr(line, p + 15, q - (p + 15))
            if (substr(line, p + 11, 4) == " on " && pid ~ /^ *-?[0-9]+$/ &&
                (length(host) == 10 || (length(host) > 10 && host !~ /^ /)))
                line = substr(line, 1, p + 4) "PPPPPP on HHHHHHHHHH" substr(line, q)
        }
    }
    w = line ~ /^#/ ? 0 : length(line) == 118 ? 33 : length(line) == 190 ? 69 : 0  # a placement's columns
    for (k = 0; w && k < 2; k++) {
        o = 55 + w * k  # 1-based start of the time field of placement k
        line = substr(line, 1, o - 1) "TTTTTTT" substr(line, o + 7, 2) "AAAAAA" substr(line, o + 15, 2) \
               "BBBBBB" substr(line, o + 23)
        if (w == 69)  # -I: i_min i_max i_p99 i_cv% after #wrong, 7 columns each
            line = substr(line, 1, o + 32) "mmmmmmm  MMMMMMM  ppppppp  ccccccc" substr(line, o + 67)
    }
    if (line ~ /^# Avg bus bandwidth    : [0-9.e+-]+ /)
        sub(/: [0-9.e+-]+ /, ": AVG ", line)
    print line
}
