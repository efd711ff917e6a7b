#!/usr/bin/env bash
# perfmark report --by-marker on prog-phases (nested ranges frame > update,
# render on one thread, io on another): counts and durations within 5 % of
# what the program timed itself (between its times from inside and from
# outside the marker calls: a marker is stamped somewhere in its call, and
# a call preempted waits there for milliseconds), the function each range
# runs on top with >= 90 % of its self samples, the counter, --range, the
# text table, and the plain report against stock perf report's self
# percentages.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/analysis-lib.sh"
need_phases
command -v python3 >/dev/null || skip "python3 missing"

record_phases 20
"$PERFMARK" report -i "$PH" --by-marker --json >"$T/bm.json" 2>"$T/bm.err" ||
	die "report --by-marker --json failed" -- "$T/bm.err"
python3 - "$T/bm.json" "$T/ph.out" <<'PY' || die "report --by-marker disagrees with the workload" -- "$T/bm.json" "$T/ph.out"
import json, sys
doc = json.load(open(sys.argv[1]))
own = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "range":
        # from outside the calls (before begin, after end) and from inside them
        own[f[1]] = {"count": int(f[3]), "total_ns": (int(f[9]), int(f[5])),
                     "max_ns": (int(f[11]), int(f[7]))}
ranges = {r["name"]: r for r in doc["ranges"]}
expect_fn = {"frame": "frame_overhead", "update": "update_world",
             "render": "render_scene", "io": "compress_block"}
assert set(ranges) == set(expect_fn), sorted(ranges)
for name, fn in expect_fn.items():
    r, o = ranges[name], own[name]
    assert r["count"] == o["count"] == 20 and r["open"] == 0, (name, r, o)
    for k in ("total_ns", "max_ns"):
        lo, hi = o[k]
        miss = lo - r[k] if r[k] < lo else r[k] - hi if r[k] > hi else 0
        rel = miss / hi
        print(f"{name}: {k} report {r[k]} workload {lo}..{hi} ({100 * rel:.3f} % outside)")
        assert rel <= 0.05, (name, k)
    assert r["mean_ns"] == r["total_ns"] // r["count"]
    assert r["min_ns"] <= r["p50_ns"] <= r["p99_ns"] <= r["max_ns"], r
    top = r["functions"][0]
    print(f"{name}: top {top['name']} {top['self_pct']:.1f} % of {r['self_samples']} self samples")
    assert top["name"] == fn and top["self_pct"] >= 90.0, (name, r["functions"][:3])
    assert r["self_samples"] >= 20, (name, r["self_samples"])
# nesting: frame's total holds update's and render's samples, io is on its own thread
f = ranges["frame"]
assert f["total_samples"] == f["self_samples"] + ranges["update"]["self_samples"] + \
    ranges["render"]["self_samples"], f
assert ranges["io"]["total_samples"] == ranges["io"]["self_samples"]
c = {c["name"]: c for c in doc["counters"]}["frames"]
assert (c["count"], c["min"], c["max"], c["last"]) == (20, 0, 19, 19), c
PY
ok "--by-marker: durations within 5 %, top function >= 90 % per range, counter"

# text: the table and the top functions
"$PERFMARK" report -i "$PH" --by-marker >"$T/bm.txt" 2>"$T/bm.err" || die "report --by-marker failed" -- "$T/bm.err"
grep -Eq '^render +20 +0 ' "$T/bm.txt" || die "no 'render 20 0' row" -- "$T/bm.txt"
grep -Eq '^frames +20 +0 +19 +19$' "$T/bm.txt" || die "no counter row" -- "$T/bm.txt"
grep -A1 '^update: top functions' "$T/bm.txt" | grep -q 'update_world' || die "update's top function" -- "$T/bm.txt"
ok "--by-marker text table"

# --range: only what ran inside render (nested ones of frame included for frame)
"$PERFMARK" report -i "$PH" --range render --json >"$T/rr.json" 2>"$T/rr.err" || die "--range failed" -- "$T/rr.err"
"$PERFMARK" report -i "$PH" --range frame --sort total --json >"$T/rf.json" 2>>"$T/rr.err" || die "--range frame failed" -- "$T/rr.err"
python3 - "$T/rr.json" "$T/rf.json" "$T/bm.json" <<'PY' || die "--range is wrong" -- "$T/rr.json" "$T/rf.json"
import json, sys
rr, rf, bm = (json.load(open(p)) for p in sys.argv[1:4])
ranges = {r["name"]: r for r in bm["ranges"]}
assert rr["samples"] == ranges["render"]["total_samples"], (rr["samples"], ranges["render"])
assert [c["comm"] for c in rr["commands"]] == ["pm-frames"], rr["commands"]
assert rr["commands"][0]["functions"][0]["name"] == "render_scene"
assert rf["samples"] == ranges["frame"]["total_samples"]
names = [f["name"] for f in rf["commands"][0]["functions"]]
assert "compress_block" not in names, "io thread samples inside frame"
assert rf["sort"] == "total" and rf["commands"][0]["functions"][0]["total_pct"] >= 99.0, names[:3]
PY
ok "--range keeps only the samples inside the range (nested ranges included)"

# the plain report gives perf report's self percentages
"$PERFMARK" report -i "$PH" --json >"$T/all.json" 2>"$T/all.err" || die "report --json failed" -- "$T/all.err"
perf_self "$PH" >"$T/perf.self"
[ -s "$T/perf.self" ] || die "perf report printed nothing" -- "$T/perf.self"
python3 - "$T/all.json" "$T/perf.self" <<'PY' || die "report and perf report disagree" -- "$T/perf.self" "$T/all.json"
import json, sys
doc = json.load(open(sys.argv[1]))
mine = {}
for c in doc["commands"]:
    for f in c["functions"]:
        mine[f["name"]] = mine.get(f["name"], 0) + f["self_pct"]
perf = {}
for line in open(sys.argv[2]):
    p, s = line.split()
    perf[s] = perf.get(s, 0) + float(p)
for s in ("render_scene", "update_world", "frame_overhead", "compress_block"):
    print(f"{s}: perfmark {mine.get(s, 0):.2f} % perf {perf.get(s, 0):.2f} %")
    assert abs(mine.get(s, 0) - perf[s]) <= 0.1, s
PY
"$PERFMARK" report -i "$PH" >"$T/all.txt" 2>"$T/all.err" || die "report failed" -- "$T/all.err"
grep -Eq '^pm-frames: [0-9]+ samples' "$T/all.txt" && grep -Eq '^pm-io: [0-9]+ samples' "$T/all.txt" ||
	die "no per-command sections" -- "$T/all.txt"
ok "report: self % per function as perf report gives it, per command"

# pipe mode from a live recording, and ranges left open by a killed program
"$PERFMARK" record -g -o - -- "$PROGS/prog-phases" 4 2>/dev/null |
	"$PERFMARK" report -i - --by-marker --json >"$T/pipe.json" 2>"$T/pipe.err" || die "report -i - failed" -- "$T/pipe.err"
"$PERFMARK" record -o "$T/open.data" -- timeout -s KILL 0.5 "$PROGS/prog-phases" 1000 >/dev/null 2>&1
"$PERFMARK" report -i "$T/open.data" --by-marker --json >"$T/open.json" 2>"$T/open.err" || die "report on a killed run failed" -- "$T/open.err"
python3 - "$T/pipe.json" "$T/open.json" <<'PY' || die "pipe mode or open ranges wrong" -- "$T/pipe.json" "$T/open.json"
import json, sys
pipe, op = (json.load(open(p)) for p in sys.argv[1:3])
assert {r["name"]: r["count"] for r in pipe["ranges"]} == {"frame": 4, "update": 4, "render": 4, "io": 4}, pipe
o = {r["name"]: r for r in op["ranges"]}
# killed inside a frame (the frame loop leaves no gap worth a sample): frame is open,
# and with it update or render; nothing opens twice on one thread
assert o["frame"]["count"] >= 5, o["frame"]
assert 1 <= sum(r["open"] for r in o.values()) <= 3, o
assert all(r["open"] <= 1 for r in o.values()), o
PY
ok "pipe input; a begin without an end is reported as open"
