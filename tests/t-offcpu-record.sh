#!/usr/bin/env bash
# record --off-cpu, read by stock perf: the offcpu-time event in perf report
# with the stacks each range of prog-offcpu blocks in (pipe_read and
# pipe_reader, a futex wait and lock_waiter, the nanosleep path and
# sleep_waiter; the kernel's walk of a waiting task starts below the
# scheduler's own functions: hrtimer_nanosleep, not do_nanosleep), the waker each names (the writer, the locker, a timer's
# interrupt), no off-CPU interval of a thread overlapping its own cpu-clock
# samples, and the same stacks unwound by perf from --call-graph dwarf copies.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
[ -x "$PROGS/prog-offcpu" ] || skip "no test program $PROGS/prog-offcpu"
command -v python3 >/dev/null || skip "python3 missing"

# the offcpu-time part of perf report --stdio (every entry, its call graph)
offcpu_report() {
	perf report -i "$1" --stdio --no-children -g graph,0,caller --percent-limit 0 2>/dev/null |
		awk '/^# Samples: .* of event / { on = /offcpu-time/ } on'
}

# --- ehframe: stacks and wakers, read by stock perf ----------------------------
"$PERFMARK" record --off-cpu --call-graph ehframe -o "$T/eh.data" -- \
	"$PROGS/prog-offcpu" 5 >"$T/eh.out" 2>"$T/eh.err" || die "record --off-cpu failed" -- "$T/eh.err"
perf evlist -i "$T/eh.data" 2>/dev/null | grep -qx 'offcpu-time' ||
	die "perf evlist has no offcpu-time" -- "$T/eh.err"
offcpu_report "$T/eh.data" >"$T/eh.rep"
grep -q "of event 'offcpu-time'" "$T/eh.rep" || die "perf report lists no offcpu-time" -- "$T/eh.rep"
for f in pipe_read pipe_reader futex_wait lock_waiter hrtimer_nanosleep sleep_waiter; do
	grep -q "$f" "$T/eh.rep" || die "perf report's offcpu-time has no $f" -- "$T/eh.rep"
done
ok "perf report lists offcpu-time with the blocking stacks"

# each range's stack, whole in one sample; its waker from the payload (offcpu_raw.h).
# The kernel does not deliver every sched_waking (a timer's wakeup of the
# nanosleep reached neither the program nor perf record -e sched:sched_waking
# of the same run): such an interval names no waker, and the recorder says
# how many there were.  The waker is checked on the longest interval whose
# wakeup was seen, and each one without is one the recorder counted.
main_tid=$(awk '/^tid/ { print $2 }' "$T/eh.out")
nowaker=$(sed -n 's/.* \([0-9]*\) off-cpu intervals blocked whose wakeup .*/\1/p' "$T/eh.err")
python3 "$PERFMARK_SRC/tests/offcpu_script.py" "$T/eh.data" >"$T/eh.json" || die "offcpu_script.py failed"
python3 - "$T/eh.json" "$main_tid" "${nowaker:-0}" <<'PY' || die "stacks or wakers wrong" -- "$T/eh.out" "$T/eh.err"
import json, sys
every = [json.loads(l) for l in open(sys.argv[1])]
main_tid, nowaker = int(sys.argv[2]), int(sys.argv[3])
unnamed = [s for s in every if s["state"] == 2 and s["count"] == 1 and not s["waker_flags"]]
print(f"{len(unnamed)} blocked samples name no waker; the recorder counted {nowaker} such intervals")
assert len(unnamed) <= nowaker, "a waker lost without being counted"
off = [s for s in every if s["tid"] == main_tid]
tids = {s["tid"] for s in every}
want = {"pipe": ("pipe_read", "pipe_reader", "task"),
        "lock": ("futex_wait", "lock_waiter", "task"),
        "sleep": ("hrtimer_nanosleep", "sleep_waiter", "irq")}
for name, (kfn, ufn, who) in want.items():
    hits = [s for s in off if any(kfn in f for f in s["frames"]) and ufn in s["frames"]]
    assert hits, f"{name}: no sample with {kfn} and {ufn}"
    big = max(hits, key=lambda s: s["period"])
    print(f"{name}: {len(hits)} samples with {kfn} and {ufn}, longest {big['period']} ns, "
          f"state {big['state']}, count {big['count']}, waker flags {big['waker_flags']} "
          f"tid {big['waker_tid']}")
    assert big["version"] == 1 and big["state"] == 2 and big["count"] == 1, (name, big)
    assert big["end"] >= big["time"] + big["period"] - 1000, (name, "end", big)
    if not big["waker_flags"]:
        seen = [s for s in hits if s["state"] == 2 and s["count"] == 1 and s["waker_flags"]]
        assert seen, (name, "no interval names its waker")
        big = max(seen, key=lambda s: s["period"])
        print(f"{name}: its wakeup unseen; the longest seen, {big['period']} ns, waker flags "
              f"{big['waker_flags']} tid {big['waker_tid']}")
    if who == "irq":
        assert big["waker_flags"] == 2, (name, "not woken by an interrupt", big)
    else:
        # woken by a thread of the workload, not the one that waited
        assert big["waker_flags"] == 1 and big["waker_tid"] in tids and \
            big["waker_tid"] != main_tid, (name, "waker", big)
PY
ok "each range's stack whole in one sample, blocked, with its waker (a thread, a timer)"

# --- --off-cpu=0: every interval its own sample, none overlapping the thread's samples --
"$PERFMARK" record --off-cpu=0 -g -o "$T/all.data" -- "$PROGS/prog-offcpu" 3 \
	>"$T/all.out" 2>"$T/all.err" || die "record --off-cpu=0 failed" -- "$T/all.err"
grep -q ' 0 of them summing' "$T/all.err" || die "--off-cpu=0 summed intervals" -- "$T/all.err"
perf script -i "$T/all.data" -F tid,time,event,period 2>/dev/null >"$T/all.script"
python3 - "$T/all.script" <<'PY' || die "an off-CPU interval overlaps its thread's samples"
import bisect, re, sys, collections
on, off = collections.defaultdict(list), collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r"\s*(\d+)\s+(\d+)\.(\d+):\s+(\d+)\s+(\S+):", line)
    if not m:
        continue
    tid, t, period, ev = int(m[1]), int(m[2]) * 10**9 + int(m[3].ljust(9, "0")), int(m[4]), m[5]
    if ev == "cpu-clock":
        on[tid].append(t)
    elif ev == "offcpu-time":
        off[tid].append((t, t + period))
n = 0
for tid, iv in off.items():
    ts = sorted(on[tid])
    for a, b in iv:
        # perf script prints microseconds: a sample within 1 us of an edge is that edge
        i = bisect.bisect_right(ts, a + 1000)
        assert i == len(ts) or ts[i] >= b - 1000, (tid, a, b, ts[i])
        n += 1
    for (a1, b1), (a2, b2) in zip(sorted(iv), sorted(iv)[1:]):
        assert b1 <= a2 + 1000, ("off-CPU intervals overlap", tid, a1, b1, a2)
assert n > 50 and sum(len(v) for v in on.values()) > 50, (n, "too few samples")
print(f"{n} off-CPU intervals of {len(off)} threads, none over their cpu-clock samples")
PY
ok "off-CPU intervals overlap neither the thread's cpu-clock samples nor each other"

# --- dwarf: the stack copies unwound by perf -------------------------------
"$PERFMARK" record --off-cpu --call-graph dwarf -o "$T/dw.data" -- "$PROGS/prog-offcpu" 2 \
	>"$T/dw.out" 2>"$T/dw.err" || die "record --off-cpu --call-graph dwarf failed" -- "$T/dw.err"
offcpu_report "$T/dw.data" >"$T/dw.rep"
for f in pipe_read pipe_reader lock_waiter sleep_waiter; do
	grep -q "$f" "$T/dw.rep" || die "perf's dwarf unwinding of offcpu-time has no $f" -- "$T/dw.rep"
done
ok "--call-graph dwarf: perf unwinds the off-CPU stack copies"

# --- nothing lost between the switch program and the file --------------------
# A byte at a time through a pipe: thousands of waits, nearly all under
# 10 ms, so summed in BPF while the recorder takes the sums out of their
# map at every read.  Each interval the programs wrote or summed is in the
# file (a sum counts its intervals); each read switches the programs to
# the other map before it takes one, so none is added to a sum being
# taken out.
"$PERFMARK" record --off-cpu=10ms -v -o "$T/pp.data" -- \
	sh -c 'dd if=/dev/zero bs=1 count=200000 status=none | cat >/dev/null' \
	>"$T/pp.out" 2>"$T/pp.err" || die "record --off-cpu=10ms of a pipe failed" -- "$T/pp.err"
read -r seen written < <(sed -n 's/.*off-cpu: \([0-9]*\) intervals written or summed .*, \([0-9]*\) in the samples written.*/\1 \2/p' "$T/pp.err")
[ -n "$seen" ] || die "record -v does not say what the switch programs wrote or summed" -- "$T/pp.err"
[ "$seen" -ge 500 ] || die "only $seen off-CPU intervals of a byte-at-a-time pipe" -- "$T/pp.err"
[ "$seen" -eq "$written" ] || die "$seen intervals written or summed in BPF, $written in the file" -- "$T/pp.err"
grep -q ' 0 intervals lost' "$T/pp.err" || die "intervals lost" -- "$T/pp.err"
ok "a byte-at-a-time pipe: all $seen off-CPU intervals in the file, summed or not"

# --- errors ------------------------------------------------------------------
for bad in 1m -5 10000000001 x; do
	if "$PERFMARK" record --off-cpu="$bad" -o "$T/bad.data" -- true 2>"$T/bad.err"; then
		die "--off-cpu=$bad accepted"
	fi
	[ "$(wc -l <"$T/bad.err")" -eq 1 ] && grep -q '^perfmark: bad off-cpu MIN_NS' "$T/bad.err" ||
		die "--off-cpu=$bad: not one clear error line" -- "$T/bad.err"
done
ok "a bad MIN_NS is one error line"
