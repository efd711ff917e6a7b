#!/usr/bin/env python3
"""perfmark report --sort KEYS against stock perf report, row by row.

    report_cmp.py PERFMARK FILE KEYS children|self [--rows-of dso=X|sym=X] -- [OPTION...]

Runs `perf report --stdio -g none --sort KEYS --children|--no-children OPTION...`
and `perfmark report --json --sort KEYS [--no-children] OPTION...` on FILE and
compares the Children and Self percentages of every row: a row one side lacks
counts 0 there.  Exit 1 when a row differs by more than 0.1 point, or when
either side has no row.  Rows of frames no symbol covers are not compared
(perf has a row per raw address, perfmark one [unknown] row, or none for
an address 0).  --rows-of compares only the rows of that file or
symbol in the Children column: with --dsos or --symbols, perf report
--children shows a caller's row or not by which sample created it first
(the leaf's filter bit stays with the entry), which perfmark does not copy;
when perf leaves that column out, its rows perfmark does not list (those
callers) are not compared at all.

perf's text is read by its header: it leaves out a column that its filters
made single-valued (--comms x), cuts commands to the column's width, and
writes pid as PID:COMMAND and cpu as 000.
"""
import json
import re
import subprocess
import sys

HEADERS = {"Command": "comm", "Shared Object": "dso", "Symbol": "sym", "Pid:Command": "pid",
           "CPU": "cpu"}


def add_row(rows, seen, k, ch, se, each=None):
    """Rows that read alike (two symbols of one name in two files, with
    --sort sym) are summed, and counted in seen; each keeps them apart."""
    if each is not None:
        each.setdefault(k, []).append((ch, se))
    if k in rows:
        och, ose = rows[k]
        ch = None if ch is None else ch + (och or 0.0)
        se = se + ose
    rows[k] = (ch, se)
    seen[k] = seen.get(k, 0) + 1


def perf_rows(text, keys, children):
    rows, cols, seen, each = {}, None, {}, {}
    for line in text.splitlines():
        if line.startswith("# Children") or line.startswith("# Overhead"):
            names = [h.strip() for h in re.split(r"\s{2,}", line[2:].strip())]
            cols = [HEADERS[h] for h in names if h in HEADERS]
            continue
        if line.startswith("#") or not line.strip() or cols is None:
            continue
        m = re.match(r"^\s+([\d.]+)%\s+(?:([\d.]+)%\s+)?(.*)$", line)
        if not m:
            continue
        first, second, rest = m.group(1), m.group(2), m.group(3)
        ch, se = (float(first), float(second)) if children else (None, float(first))
        vals = {}
        for k in cols:
            if k == "sym":
                vals[k] = re.match(r"\[.\] (.*?)\s*$", rest).group(1)
                rest = ""
            else:
                mm = re.match(r"\s*(\S+)\s*(.*)$", rest)
                v, rest = mm.group(1), mm.group(2)
                vals[k] = int(v.split(":")[0]) if k in ("pid", "cpu") else v
        add_row(rows, seen, tuple(vals.get(k) for k in keys), ch, se, each)
    return rows, cols or [], seen, each


def main():
    argv = sys.argv[1:]
    sep = argv.index("--")
    head, opts = argv[:sep], argv[sep + 1:]
    perfmark, data, keys_arg, mode = head[:4]
    rows_of = head[5] if len(head) > 5 and head[4] == "--rows-of" else None
    children = mode == "children"
    keys = keys_arg.replace("tid", "pid").split(",")   # perf's pid key is the thread
    perf = subprocess.run(["perf", "report", "-i", data, "--stdio", "-g", "none",
                           "--sort", ",".join(keys),
                           "--children" if children else "--no-children"] + opts,
                          capture_output=True, text=True).stdout
    mine = json.loads(subprocess.run(
        [perfmark, "report", "-i", data, "--json", "--sort", keys_arg] +
        ([] if children else ["--no-children"]) + opts,
        capture_output=True, text=True, check=True).stdout)
    pr, cols, pseen, peach = perf_rows(perf, keys, children)
    mine_keys = keys_arg.split(",")
    # a column perf left out holds the one value its filter allows: perfmark's other rows
    # (callers of the samples kept) are not perf's rows then
    pinned = {}
    for i, o in enumerate(opts[:-1]):
        key = {"--comm": "comm", "--comms": "comm", "--dso": "dso", "--dsos": "dso",
               "--sym": "sym", "--symbols": "sym"}.get(o)
        if key and "," not in opts[i + 1]:
            pinned[key] = opts[i + 1]
    mr, mseen = {}, {}
    for r in mine["rows"]:
        if any(pk not in cols and pk in pinned and r[mk] != pinned[pk]
               for mk, pk in zip(mine_keys, keys)):
            continue
        k = tuple(r[mk] if pk in cols else None for mk, pk in zip(mine_keys, keys))
        add_row(mr, mseen, k, r["children_pct"], r["self_pct"])
    # as many rows of one name as perf has (a sample in ld.so's _start beside the
    # program's, on a loaded machine), not a row perf keeps whole split in two
    for k, n in mseen.items():
        assert n == 1 or n == pseen.get(k, 0), f"{n} perfmark rows read as one, perf has {pseen.get(k, 0)}: {k}"

    def cut(k):     # perf cuts commands to its column's width
        return tuple(v[:9] if isinstance(v, str) and keys[i] == "comm" else v
                     for i, v in enumerate(k))
    pr = {cut(k): v for k, v in pr.items()}
    mr = {cut(k): v for k, v in mr.items()}
    peach = {cut(k): v for k, v in peach.items()}
    # frames no symbol covers: perf writes a row per raw address (0x...), perfmark one
    # [unknown] row per file; not the same rows by design, so neither is compared
    if "sym" in keys:
        si = keys.index("sym")

        def named(k):
            return not (isinstance(k[si], str) and re.match(r"^(\[unknown\]|0x[0-9a-f]+|[0-9a-f]{16})$", k[si]))
        pr = {k: v for k, v in pr.items() if named(k)}
        mr = {k: v for k, v in mr.items() if named(k)}
    if rows_of and children and rows_of.split("=", 1)[0] not in cols:
        # perf left the --rows-of column out (its filter made it single-valued), so its
        # callers' rows read like the file's own; their Self column is as order-dependent
        # as their Children (a caller's own samples count when a kept sample made its
        # entry first): perf's rows that perfmark does not list are callers, not compared;
        # and a row of the file's own that perf leaves out altogether (its entry made
        # first by a sample through it whose leaf is elsewhere, so filtered, and kept
        # so by the leaf samples added after) is perf's order, not compared either
        pr = {k: v for k, v in pr.items() if k in mr}
        mr = {k: v for k, v in mr.items() if k in pr}
        # and with the column gone, a caller's row reads as the file's own: of perf's
        # rows of one such key, the file's own is the one perfmark's row is (the others,
        # callers, not compared; summed they were 23.52 against 4.65)
        for k, rs in peach.items():
            if k in pr and len(rs) > 1:
                pr[k] = min(rs, key=lambda r: max(abs((r[0] or 0.0) - (mr[k][0] or 0.0)),
                                                  abs(r[1] - mr[k][1])))
    worst, bad = 0.0, 0
    for k in sorted(set(pr) | set(mr), key=str):
        p, m = pr.get(k, (0.0, 0.0)), mr.get(k, (0.0, 0.0))
        d = abs(m[1] - p[1])
        if children:
            of = True
            if rows_of:
                what, val = rows_of.split("=", 1)
                # (None: perf left the column out, and only the file's rows are left)
                of = what in keys and k[keys.index(what)] in (val, None)
            if of:
                d = max(d, abs((m[0] or 0.0) - (p[0] or 0.0)))
        worst = max(worst, d)
        if d > 0.1:
            bad += 1
            print(f"  differs: {k}: perf children/self {p}, perfmark {m}")
    print(f"  --sort {keys_arg} {mode} {' '.join(opts)}: {len(pr)} rows in perf, "
          f"{len(mr)} in perfmark, at most {worst:.2f} points apart")
    if bad or not pr or not mr:
        sys.exit(1)


main()
