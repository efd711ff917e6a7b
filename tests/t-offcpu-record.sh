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

# each range's stack, whole in one sample; its waker from the payload (offcpu_raw.h)
perf script -i "$T/eh.data" -F tid,time,event,period,ip,sym 2>/dev/null >"$T/eh.stacks"
perf script -i "$T/eh.data" -F tid,time,event,period,bpf-output 2>/dev/null >"$T/eh.raw"
python3 - "$T/eh.stacks" "$T/eh.raw" "$T/eh.out" <<'PY' || die "stacks or wakers wrong" -- "$T/eh.out"
import re, sys
HEAD = re.compile(r"(\d+)\s+(?:\[\d+\]\s+)?(\d+\.\d+):\s+(\d+)\s+(\S+):\s*$")
def parse(path):
    out, cur = [], None
    for line in open(path, errors="replace"):
        m = HEAD.search(line)
        if m:
            cur = {"tid": int(m[1]), "event": m[4], "period": int(m[3]), "frames": [], "raw": b""}
            out.append(cur)
            continue
        m = re.search(r"\b[0-9a-f]{4}: ((?:[0-9a-f]{2} )+)", line)
        if cur and m:
            cur["raw"] += bytes.fromhex(m[1].replace(" ", ""))
            continue
        f = line.split()
        if cur and len(f) >= 2 and re.fullmatch(r"[0-9a-f]+", f[0]):
            cur["frames"].append(f[1])
    return [s for s in out if s["event"] == "offcpu-time"]
stacks, raws = parse(sys.argv[1]), parse(sys.argv[2])
assert len(stacks) == len(raws) and stacks, (len(stacks), len(raws))
for s, r in zip(stacks, raws):
    assert (s["tid"], s["period"]) == (r["tid"], r["period"])
    s["raw"] = r["raw"]
main_tid = int(next(l.split()[1] for l in open(sys.argv[3]) if l.startswith("tid ")))
off = [s for s in stacks if s["tid"] == main_tid]
u32 = lambda b, o: int.from_bytes(b[o:o + 4], "little")
want = {"pipe": ("pipe_read", "pipe_reader", "task"),
        "lock": ("futex_wait", "lock_waiter", "task"),
        "sleep": ("hrtimer_nanosleep", "sleep_waiter", "irq")}
tids = {s["tid"] for s in stacks}
for name, (kfn, ufn, who) in want.items():
    hits = [s for s in off if any(kfn in f for f in s["frames"]) and ufn in s["frames"]]
    assert hits, f"{name}: no sample with {kfn} and {ufn}"
    big = max(hits, key=lambda s: s["period"])
    r = big["raw"]
    version, state, count, flags, wtid = r[0] | r[1] << 8, r[2] | r[3] << 8, u32(r, 8), u32(r, 12), u32(r, 20)
    print(f"{name}: {len(hits)} samples with {kfn} and {ufn}, longest {big['period']} ns, "
          f"state {state}, count {count}, waker flags {flags} tid {wtid}")
    assert version == 1 and state == 2 and count == 1, (name, version, state, count)
    if who == "irq":
        assert flags == 2, (name, "not woken by an interrupt", flags)
    else:
        # woken by a thread of the workload, not the one that waited
        assert flags == 1 and wtid in tids and wtid != main_tid, (name, "waker", flags, wtid)
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

# --- errors ------------------------------------------------------------------
for bad in 1m -5 10000000001 x; do
	if "$PERFMARK" record --off-cpu="$bad" -o "$T/bad.data" -- true 2>"$T/bad.err"; then
		die "--off-cpu=$bad accepted"
	fi
	[ "$(wc -l <"$T/bad.err")" -eq 1 ] && grep -q '^perfmark: bad off-cpu MIN_NS' "$T/bad.err" ||
		die "--off-cpu=$bad: not one clear error line" -- "$T/bad.err"
done
ok "a bad MIN_NS is one error line"
