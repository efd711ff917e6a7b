#!/usr/bin/env bash
# --off-cpu in a perfmarkd session: created from the command line (the
# option crosses the protocol), shown by session show, in its snapshots as
# offcpu-time with blocking stacks; and after kill -9 of the daemon, the
# pinned programs went on noting and the new daemon drains the pinned map
# of sums: intervals of a process that ran while no daemon did are in the
# next snapshot, short ones summed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-offcpu" ] || skip "no test program $PROGS/prog-offcpu"
command -v python3 >/dev/null || skip "python3 missing"
daemon_start

pm session create off1 -a --no-markers --off-cpu=250us --call-graph ehframe -F 99 --ring 16M \
	2>"$T/create.err" || die "session create --off-cpu failed" -- "$T/create.err" "$T/pmd.log"
pm session show off1 --json >"$T/show.json" || die "session show failed"
python3 - "$T/show.json" <<'PY' || die "session show does not say off_cpu" -- "$T/show.json"
import json, sys
d = json.load(open(sys.argv[1]))
spec = d["spec"]
assert spec["off_cpu"] is True and spec["off_cpu_min_ns"] == 250000, spec
PY
pm session show off1 | grep -qi 'off-cpu' || die "session show's text does not say off-cpu" -- "$T/show.json"

# offcpu-time samples of a workload, with its stacks, in a snapshot.  A
# process the session meets first (-a) has its stacks walked by frame
# pointers until its ehframe tables are built, on worker threads: on a
# loaded machine that can outlast a run, and read()'s caller (pipe_reader)
# is lost to frame pointers.  So the workload runs again, up to a deadline,
# until a run of it has the whole stack.
has_pipe_stack() {   # perf script FILE, tid
	python3 - "$1" "$2" <<'PY'
import re, sys
tid, cur, ok = sys.argv[2], None, False
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\s*(\d+)\s+(\S+):", line)
    if m:
        cur = {"tid": m[1], "ev": m[2], "f": []}
        continue
    if cur is not None and cur["tid"] == tid and cur["ev"] == "offcpu-time":
        cur["f"] += line.split()[1:2]
        if any("pipe_read" in f for f in cur["f"]) and "pipe_reader" in cur["f"]:
            ok = True
sys.exit(0 if ok else 1)
PY
}
deadline=$((SECONDS + 120)) runs=0
while :; do
	"$PROGS/prog-offcpu" 3 >"$T/w1.out" || die "prog-offcpu failed"
	runs=$((runs + 1))
	w1=$(awk '/^tid/ { print $2 }' "$T/w1.out")
	pm session snapshot off1 -o "$T/s1.data" || die "snapshot failed" -- "$T/pmd.log"
	perf script -i "$T/s1.data" -F tid,event,ip,sym 2>/dev/null >"$T/s1.txt"
	has_pipe_stack "$T/s1.txt" "$w1" && break
	[ "$SECONDS" -lt "$deadline" ] ||
		die "no offcpu-time with pipe_read and pipe_reader of the workload in $runs runs" -- "$T/s1.txt"
done
ok "a session with --off-cpu: shown, and its snapshot holds the workload's blocking stacks (run $runs)"

# the daemon dies; the pinned programs go on; the next daemon adopts and drains
daemon_kill9
"$PROGS/prog-offcpu" 2 >"$T/w2.out" || die "prog-offcpu failed"
w2=$(awk '/^tid/ { print $2 }' "$T/w2.out")
daemon_start
grep -q "adopted" "$T/pmd.log" || die "the restarted daemon did not adopt the pins" -- "$T/pmd.log"
# the adopted ring drains on the daemon's loop: snapshot until the workload is in it
n=0
adopted_in_snapshot() {
	pm session snapshot off1 -o "$T/s2.data" || return 1
	perf script -i "$T/s2.data" -F tid,event,period 2>/dev/null >"$T/s2.txt"
	n=$(awk -v t="$w2" '$1 == t && $3 == "offcpu-time:"' "$T/s2.txt" | wc -l)
	[ "$n" -ge 10 ]
}
wait_until 60 adopted_in_snapshot ||
	die "$n offcpu-time samples of the workload that ran while no daemon did" -- "$T/pmd.log"
pm session show off1 --json >"$T/show2.json"
python3 - "$T/show2.json" <<'PY' || die "no sums after adoption" -- "$T/show2.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["offcpu"] > 0 and d["offcpu_sums"] > 0 and d["offcpu_summed"] >= d["offcpu_sums"], d
PY
ok "off-CPU intervals noted while the daemon was down reach the next snapshot ($n samples of the workload)"
pm session delete off1 || die "delete failed"
