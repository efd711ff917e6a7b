#!/usr/bin/env bash
# Two sessions on the same events share one set of BPF programs: a sample
# costs one run of the sampler, not one per session.  A session with other
# settings gets its own.  Each session still sees exactly its own share.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
command -v bpftool >/dev/null || skip "bpftool not installed"
daemon_start

# the sampler program behind a session's pinned links
sampler_of() {
	local l
	for l in "$PMD_PINS/$1"/link*; do
		bpftool link show pinned "$l" 2>/dev/null | sed -n 's/^[0-9]*: perf_event *prog \([0-9]*\).*/\1/p'
	done | sort -u | while read -r id; do
		bpftool prog show id "$id" 2>/dev/null | grep -q 'name on_sample' && echo "$id"
	done
}
show() { pm session show "$1" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }

pm session create sh1 -F 997 --ring 16M || die "create sh1 failed" -- "$T/pmd.log"
pm session create sh2 -F 997 --ring 16M || die "create sh2 failed" -- "$T/pmd.log"
p1=$(sampler_of sh1) p2=$(sampler_of sh2)
[ -n "$p1" ] && [ "$(echo "$p1" | wc -l)" -eq 1 ] || die "sh1: sampler programs '$p1'"
[ "$p1" = "$p2" ] || die "sh1 and sh2 run different samplers ($p1, $p2)"
ok "two sessions on the same events: one sampler program (id $p1)"

# run counts: the one program runs once per sample for both sessions
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled=0; daemon_cleanup' EXIT
id=$p1
runs0=$(bpftool prog show id "$id" | sed -n 's/.*run_cnt \([0-9]*\).*/\1/p')
s1a=$(show sh1 samples); s2a=$(show sh2 samples)
"$PERFMARK_BUILD/tests/prog-spin" 1 >/dev/null 2>&1
runs1=$(bpftool prog show id "$id" | sed -n 's/.*run_cnt \([0-9]*\).*/\1/p')
# the sessions' counts take every sample up to now once a snapshot flushed them
pm session snapshot sh1 -o "$T/flush1" && pm session snapshot sh2 -o "$T/flush2" || die "snapshot failed"
s1b=$(show sh1 samples); s2b=$(show sh2 samples)
d1=$((s1b - s1a)) d2=$((s2b - s2a)) runs=$((runs1 - runs0))
echo "sampler runs: $runs; session samples: sh1 +$d1, sh2 +$d2"
[ "$d1" -gt 500 ] && [ "$d2" -gt 500 ] || die "sessions saw too few samples ($d1, $d2)"
# one run per sample (both sessions want every process): runs ~ each session's count, not the sum
fcmp "$runs < 1.5 * $d1" || die "the sampler ran $runs times for $d1 samples: work is per session"
ok "one BPF run per sample ($runs runs, $d1 and $d2 samples)"

# both sessions see the workload
pm session snapshot sh1 -o "$T/s1" && pm session snapshot sh2 -o "$T/s2" || die "snapshot failed"
for f in s1 s2; do
	perf report -i "$T/$f" --stdio --no-children >"$T/$f.report" 2>"$T/$f.report.err"
	grep -q spin_loop "$T/$f.report" && continue
	{ snapshot_holds "$T/$f" prog-spin
	  echo "report:"; grep -v '^#' "$T/$f.report" | grep . | head -15; } >"$T/$f.why"
	die "$f: no spin_loop samples" -- "$T/$f.why" "$T/$f.report.err"
done
ok "both sessions' snapshots hold the workload"

# other settings: a sampler of its own
pm session create sh3 -F 499 --ring 16M || die "create sh3 failed"
p3=$(sampler_of sh3)
[ -n "$p3" ] && [ "$p3" != "$p1" ] || die "a session with another rate did not get its own sampler ($p3)"
ok "a session at another rate has its own sampler"

# a daemon that exits (SIGTERM) leaves both sharers collecting: markers of
# a process that runs while no daemon exists are in both snapshots after
pm session snapshot sh2 -o "$T/pre" >/dev/null || die "snapshot failed"
kill -TERM "$PMD_PID"; wait "$PMD_PID" 2>/dev/null; PMD_PID=
"$DEMO" 0.2 >"$T/demo.out" 2>&1 &
demo=$!; wait "$demo"
daemon_start
# (a snapshot has everything up to its moment: what waited in the pinned ring too)
for s in sh1 sh2; do
	pm session snapshot "$s" -o "$T/down-$s" >/dev/null || die "snapshot of $s failed"
	n=$(marker_lines "$T/down-$s" | grep -c "^$demo ")
	[ "$n" -ge 3 ] || die "$s: $n markers of pid $demo, emitted while the daemon was down" -- "$T/pmd.log"
done
ok "both sharing sessions kept collecting while the daemon was down"

# deleting one sharer leaves the other collecting
pm session delete sh1 || die "delete sh1 failed"
s2c=$(show sh2 samples)
"$PERFMARK_BUILD/tests/prog-spin" 0.5 >/dev/null 2>&1
wait_until 60 session_at_least sh2 samples $((s2c + 1)) || die "sh2 stopped collecting when sh1 was deleted"
ok "sh2 keeps collecting after sh1 is deleted"
pm session delete sh2; pm session delete sh3
# perfmarkd may keep a collector idle for --linger (10 s) for the next
# recording with the same options: gone within that, not at once
prog_gone() { ! bpftool prog show id "$1" >/dev/null 2>&1; }
for p in $p1 $p3; do
	wait_until 60 prog_gone "$p" || die "sampler $p still loaded 60 s after delete"
done
ok "all samplers gone after delete"
