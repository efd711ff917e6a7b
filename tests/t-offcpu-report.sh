#!/usr/bin/env bash
# report --by-marker with off-CPU time, against what prog-offcpu measured of
# itself (wall: CLOCK_MONOTONIC, on CPU: CLOCK_THREAD_CPUTIME_ID, waiting
# for a CPU: schedstat's run_delay; blocked: the rest): per range, blocked
# within 10 % of the truth (or 1 ms), runqueue time for crowd, wall = on
# CPU + blocked + runqueue within 5 %, and the stack each range blocked in
# most: pipe_read and pipe_reader, a futex wait and lock_waiter, the
# nanosleep path and sleep_waiter (70 % of it: the first rounds, before the
# unwind tables are built, go by frame pointers).  Then report -e
# offcpu-time and --range on off-CPU samples, as on cpu-clock ones.  The truths come from the run
# itself, so a loaded machine (more waiting for CPUs) passes as an idle one.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
[ -x "$PROGS/prog-offcpu" ] || skip "no test program $PROGS/prog-offcpu"
command -v python3 >/dev/null || skip "python3 missing"

"$PERFMARK" record --off-cpu --call-graph ehframe -o "$T/w.data" -- "$PROGS/prog-offcpu" 12 \
	>"$T/w.out" 2>"$T/w.err" || die "record --off-cpu failed" -- "$T/w.err"
"$PERFMARK" report -i "$T/w.data" --by-marker --json >"$T/bm.json" 2>"$T/bm.err" ||
	die "report --by-marker --json failed" -- "$T/bm.err"
python3 - "$T/bm.json" "$T/w.out" <<'PY' || die "report --by-marker disagrees with the workload" -- "$T/w.out"
import json, sys
doc = json.load(open(sys.argv[1]))
truth = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "range":
        truth[f[1]] = {f[i]: int(f[i + 1]) for i in range(2, len(f), 2)}
ranges = {r["name"]: r for r in doc["ranges"]}
assert set(ranges) == set(truth) == {"cpu", "sleep", "pipe", "lock", "crowd"}, sorted(ranges)
ms = lambda ns: f"{ns / 1e6:.2f} ms"
for name, r in ranges.items():
    t = truth[name]
    assert r["instances"] == t["count"] == 12, (name, r["instances"], t["count"])
    on, blk, rq, wall = r["oncpu_ns"], r["blocked_ns"], r["runqueue_ns"], r["wall_ns"]
    print(f"{name}: wall {ms(wall)} = on {ms(on)} + blocked {ms(blk)} + runqueue {ms(rq)}; "
          f"truth: blocked {ms(t['blocked_ns'])}, runqueue {ms(t['runq_ns'])}, cpu {ms(t['cpu_ns'])}")
    assert abs(blk - t["blocked_ns"]) <= max(0.10 * t["blocked_ns"], 1e6), (name, "blocked", blk, t)
    assert abs(wall - (on + blk + rq)) <= 0.05 * wall, (name, "wall is not the sum", r)
    assert r["mean_wall_ns"] == wall // 12 and r["mean_blocked_ns"] == blk // 12, r
# crowd: three spinning threads on two CPUs wait for one
c = ranges["crowd"]
assert c["runqueue_ns"] >= 0.10 * c["wall_ns"], ("crowd waited for no CPU", c)
# the stack each range blocked in most, leaf first
want = {"pipe": ("pipe_read", "pipe_reader"), "lock": ("futex_wait", "lock_waiter"),
        "sleep": ("nanosleep", "sleep_waiter")}
for name, (kfn, ufn) in want.items():
    top = ranges[name]["blocking_stacks"][0]
    print(f"{name}: blocked most in {' <- '.join(top['frames'][:10])} ({ms(top['ns'])})")
    assert any(kfn in f for f in top["frames"]) and ufn in top["frames"], (name, top)
    # the first rounds may come before the unwind tables are built (the recorder builds
    # them at its drains, after the exec): their stacks are frame pointers', not this one
    assert top["ns"] >= 0.7 * ranges[name]["blocked_ns"], (name, "not most of it", top)
assert not ranges["cpu"]["blocking_stacks"] or \
    ranges["cpu"]["blocking_stacks"][0]["ns"] < 0.05 * ranges["cpu"]["wall_ns"], ranges["cpu"]
PY
ok "--by-marker: blocked within 10 % of the truth, runqueue for crowd, wall = on + blocked + runqueue, blocking stacks"

# the text: the table and the stacks
"$PERFMARK" report -i "$T/w.data" --by-marker >"$T/bm.txt" 2>"$T/bm.err" ||
	die "report --by-marker failed" -- "$T/bm.err"
grep -Eq '^RANGE +N +WALL +ON-CPU +BLOCKED +RUNQUEUE$' "$T/bm.txt" || die "no off-cpu table" -- "$T/bm.txt"
grep -A1 '^pipe: where it blocked' "$T/bm.txt" | grep -q 'pipe_read.*pipe_reader' ||
	die "pipe's blocking stack not in the text" -- "$T/bm.txt"
ok "--by-marker text: where the wall time went, where each range blocked"

# -e offcpu-time and --range, as on cpu-clock: the time off CPU inside pipe is in pipe_read
"$PERFMARK" report -i "$T/w.data" -e offcpu-time --range pipe --json >"$T/rp.json" 2>"$T/rp.err" ||
	die "report -e offcpu-time --range pipe failed" -- "$T/rp.err"
"$PERFMARK" report -i "$T/w.data" --json >"$T/all.json" 2>>"$T/rp.err" || die "report failed" -- "$T/rp.err"
python3 - "$T/rp.json" "$T/all.json" <<'PY' || die "report -e offcpu-time is wrong" -- "$T/rp.json"
import json, sys
rp, al = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert rp["event"] == "offcpu-time", rp["event"]
assert al["event"] == "cpu-clock", ("offcpu-time analysed by default", al["event"])
fns = [f for c in rp["commands"] for f in c["functions"]]
top = max(fns, key=lambda f: f["self_period"])
print(f"inside pipe, off CPU: {top['name']} {top['self_pct']} % of {rp['period'] / 1e6:.1f} ms")
assert "pipe_read" in top["name"] and top["self_pct"] >= 90, top
total = {f["name"]: f for f in fns}
# 12 rounds: the first may come before prog-offcpu's unwind tables are built, and
# a stack taken then is frame pointers' (pipe_reader, built without them, skipped)
print(f"pipe_reader under {total['pipe_reader']['total_pct']} % of it")
assert total["pipe_reader"]["total_pct"] >= 70, total.get("pipe_reader")
PY
ok "report -e offcpu-time --range pipe: the time off CPU, by function"

# script: off-CPU samples with their state and waker (who, and where it was), in text and JSON
"$PERFMARK" script -i "$T/w.data" --json >"$T/s.json" 2>"$T/s.err" || die "script --json failed" -- "$T/s.err"
"$PERFMARK" script -i "$T/w.data" >"$T/s.txt" 2>>"$T/s.err" || die "script failed" -- "$T/s.err"
python3 - "$T/s.json" "$T/w.out" <<'PY' || die "script's off-CPU samples are wrong" -- "$T/s.err"
import json, sys
main_tid = int(next(l.split()[1] for l in open(sys.argv[2]) if l.startswith("tid ")))
recs = [json.loads(l) for l in open(sys.argv[1])]
off = [r for r in recs if r["event"] == "offcpu-time"]
assert off and all("off_cpu" in r for r in off), "offcpu-time without off_cpu"
assert not any("off_cpu" in r for r in recs if r["event"] != "offcpu-time")
times = [r["time"] for r in recs]
pipe = [r for r in off if r["tid"] == main_tid and "pipe_reader" in r["callchain"]
        and r["off_cpu"]["blocked"] and r["off_cpu"]["ns"] > 10e6]
assert pipe, "no blocked pipe_reader sample of the main thread"
for r in pipe:
    o = r["off_cpu"]
    assert o["state"] == "S" and o["count"] == 1 and o["ns"] == r["period"], r
    assert o["end"] >= r["time"] + o["ns"] - 1000 and 0 <= o["runqueue_ns"] <= o["ns"], r
    assert isinstance(o["waker"], dict) and o["waker"]["tid"] != main_tid, r
    # where the writer was as it woke the reader: writing the pipe
    assert any("pipe_write" in f for f in o["waker"]["stack"]) and \
        any("write" in f for f in o["waker"]["stack"][o["waker"]["stack"].index("entry_SYSCALL_64_after_hwframe") + 1:]), r
lock = [r for r in off if r["tid"] == main_tid and "lock_waiter" in r["callchain"] and r["off_cpu"]["blocked"]
        and r["off_cpu"]["ns"] > 5e6]
assert lock and all(any("futex_wake" in f for f in r["off_cpu"]["waker"]["stack"]) and
                    any("lll_lock_wake" in f or "mutex_unlock" in f for f in r["off_cpu"]["waker"]["stack"])
                    for r in lock), lock[:1]
sleep = [r for r in off if r["tid"] == main_tid and "sleep_waiter" in r["callchain"]
         and r["off_cpu"]["ns"] > 5e6]
assert sleep and all(r["off_cpu"]["waker"] == "interrupt" for r in sleep), sleep[:1]
print(f"{len(off)} off-CPU samples; pipe woken by thread {pipe[0]['off_cpu']['waker']['tid']}, "
      f"sleep by an interrupt")
PY
grep -E 'offcpu-time: .* read off-cpu S [0-9]+ ns( \(runqueue [0-9]+ ns\))? woken by [0-9]+/[0-9]+$' "$T/s.txt" >/dev/null ||
	die "script's text has no off-cpu state and waker" -- "$T/s.txt"
grep -Eq 'off-cpu S [0-9]+ ns.* woken by an interrupt$' "$T/s.txt" || die "no interrupt waker in the text" -- "$T/s.txt"
grep -Eq $'^\twoken at: .*pipe_write <- .* <- entry_SYSCALL_64_after_hwframe <- .*write' "$T/s.txt" ||
	die "no waker stack in the text" -- "$T/s.txt"
ok "script and script --json: off-CPU samples with their state, time away, waker and where it woke them"
