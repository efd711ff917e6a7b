#!/usr/bin/env python3
"""Read perf stat / perfmark stat output and print one JSON object:
{EVENT: {"value": SUM, "lines": N, "unit": U, "metric_unit": M}, ...}.

  stat_parse.py text|csv|json FILE [SEP]

Values of several lines (intervals) of one event are added up; "<not
counted>" adds nothing.  Every line must parse, or it exits 1 saying which:
the tests use this to check that -x and --json are what csv/json read."""
import csv
import json
import re
import sys

mode, path = sys.argv[1], sys.argv[2]
sep = sys.argv[3] if len(sys.argv) > 3 else ","
out = {}


def add(ev, value, unit, metric_unit, interval=None):
    e = out.setdefault(ev, {"value": 0.0, "lines": 0, "unit": unit,
                            "metric_unit": metric_unit, "intervals": []})
    e["lines"] += 1
    if interval is not None:
        e["intervals"].append(interval)
    if value not in ("<not counted>", "<not supported>"):
        e["value"] += float(value)
    else:
        e.setdefault("states", []).append(value)


def bad(line, why):
    sys.exit("stat_parse: %s: %r" % (why, line))


with open(path, newline="") as f:
    if mode == "csv":
        for row in csv.reader(f, delimiter=sep):
            if not row or row[0].startswith("#"):     # perf -o: "# started on ..."
                continue
            interval = None
            if len(row) == 8:            # -I: the time first
                interval = float(row[0])
                row = row[1:]
            if len(row) != 7:
                bad(row, "want 7 fields")
            value, unit, ev, run, pct, mval, munit = row
            int(run)
            float(pct)
            if mval:
                float(mval)
            add(ev, value, unit, munit, interval)
    elif mode == "json":
        for line in f:
            if not line.strip():
                continue
            o = json.loads(line)
            for k in ("counter-value", "unit", "event", "event-runtime", "pcnt-running"):
                if k not in o:
                    bad(line, "no key " + k)
            add(o["event"], o["counter-value"], o["unit"], o.get("metric-unit", ""),
                o.get("interval"))
    else:
        pat = re.compile(r"^\s*(?:(\d+\.\d{9})\s+)?(<not counted>|<not supported>|[\d.]+)"
                         r"\s(msec|    )\s(\S+)\s*(?:#\s+([\d.]+%?)\s(.*?))?\s*(?:\(\d+\.\d\d%\))?\s*$")
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#") or "Performance counter" in line \
                    or line.rstrip().endswith(("seconds time elapsed", "seconds user",
                                               "seconds sys")):
                continue
            m = pat.match(line)
            if not m:
                bad(line, "not a counter line")
            add(m.group(4), m.group(2), m.group(3).strip(), (m.group(6) or "").strip(),
                float(m.group(1)) if m.group(1) else None)
print(json.dumps(out))
