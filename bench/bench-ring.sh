#!/usr/bin/env bash
# The cost of the persistent ring (issue 9): a ring whose memory is a file
# (outlives the daemon) against the same ring in the daemon's memory only,
# the in-memory ring perfmarkd had before.
#
#   bash bench/bench-ring.sh [BUILD_DIR]        (bench/run.sh runs it too)
#
# 1. Journal throughput (bench/ring-bench.c): BENCH_RING_RECORDS records
#    (default 10 M; samples of 8 frames and string markers, 3:1) through a
#    ring sink of 64 MiB, in memory and as a file in BENCH_RING_DIR (default
#    /dev/shm: tmpfs, as /run is on a normal system), then in the build's
#    file system (a disk: pages written back); ns per record and snapshot
#    time, medians of BENCH_ROUNDS.
# 2. Daemon CPU: perfmarkd with --ring-dir none and with a ring directory,
#    a system-wide ring session (-F 99, 256 MiB), a burst of
#    BENCH_RING_MARKERS markers (default 2 M, 64 bytes); the daemon's CPU
#    time (user+sys from /proc) per million markers, and the markers per
#    CPU second it drained.  Medians of BENCH_ROUNDS, alternating.
# Ratios: persistent / memory (1.00 = costs nothing more).
. "$(dirname "$0")/lib.sh"
bench_setup bench-ring "$@"
recs=${BENCH_RING_RECORDS:-10000000}
marks=${BENCH_RING_MARKERS:-2000000}
shm=${BENCH_RING_DIR:-/dev/shm}
RB=$build/bench/ring-bench
PMD=$build/perfmarkd
PM_PROG=$build/tests/prog-markers
[ -x "$RB" ] || die "no $RB (build first)"
[ -x "$PMD" ] || die "no $PMD"
[ -x "$PM_PROG" ] || die "no $PM_PROG"

W=$(mktemp -d /tmp/perfmark-bench-ring.XXXXXX)
S=$(mktemp -d "$shm/perfmark-bench-ring.XXXXXX")
pmd_pid=
cleanup() {
	[ -n "$pmd_pid" ] && kill "$pmd_pid" 2>/dev/null && wait "$pmd_pid" 2>/dev/null
	for d in /sys/fs/bpf/perfmark-bench-$$/*; do [ -d "$d" ] && rm -f "$d"/* && rmdir "$d"; done
	rmdir /sys/fs/bpf/perfmark-bench-$$ 2>/dev/null
	rm -rf "$W" "$S"
}
trap cleanup EXIT
mkdir "$W/disk"

echo "persistent ring against the in-memory ring: $rounds rounds; load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs"
# --- 1. journal throughput --------------------------------------------------------
for r in $(seq "$rounds"); do
	for k in mem shm disk; do
		case $k in mem) d=-;; shm) d=$S;; disk) d=$W/disk;; esac
		"$RB" "$d" "$recs" 64 >>"$W/rb.$k" || die "ring-bench $k failed"
	done
done
printf '\n1. journal, %s records into a 64 MiB ring sink (medians)\n' "$recs"
printf '%-28s %12s %12s %8s\n' ring "ns/record" "snapshot ms" ratio
m=$(awk '{ print $1 }' "$W/rb.mem" | median)
for k in mem shm disk; do
	v=$(awk '{ print $1 }' "$W/rb.$k" | median)
	s=$(awk '{ print $2 }' "$W/rb.$k" | median)
	case $k in mem) n="in memory (before)";; shm) n="file on tmpfs ($shm)";; disk) n="file on disk (/tmp)";; esac
	printf '%-28s %12.1f %12.1f %8.2f\n' "$n" "$v" "$s" "$(calc "$v / $m")"
done

# --- 2. daemon CPU ------------------------------------------------------------------
# run KIND: one burst; appends "cpu_s markers" to $W/d.KIND
run() {
	local kind=$1 ringdir=none sock=$W/pmd.sock state=$W/state.$1 pins=/sys/fs/bpf/perfmark-bench-$$
	[ "$kind" = file ] && ringdir=$S/rings
	rm -rf "$state" "$S/rings"
	"$PMD" --foreground --socket "$sock" --state-dir "$state" --pin-dir "$pins" --ring-dir "$ringdir" \
		>>"$W/pmd.log" 2>&1 &
	pmd_pid=$!
	for i in $(seq 100); do PERFMARK_SOCKET=$sock "$PERFMARK" session list >/dev/null 2>&1 && break; sleep 0.1; done
	PERFMARK_SOCKET=$sock "$PERFMARK" session create b -a -F 99 --ring 256M >/dev/null 2>&1 ||
		die "session create failed ($kind)"
	sleep 0.3
	local c0 c1 n0 n1 i
	read -r c0 < <(awk '{ print $14 + $15 }' "/proc/$pmd_pid/stat")
	"$PM_PROG" burst "$marks" 64 >/dev/null
	# wait until the daemon has drained everything
	n1=0
	for i in $(seq 100); do
		sleep 0.2
		n0=$n1
		n1=$(PERFMARK_SOCKET=$sock "$PERFMARK" session show b --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["markers"])')
		[ "$n1" -ge "$marks" ] && [ "$n1" = "$n0" ] && break
	done
	read -r c1 < <(awk '{ print $14 + $15 }' "/proc/$pmd_pid/stat")
	echo "$(calc "($c1 - $c0) / $(getconf CLK_TCK)") $n1" >>"$W/d.$kind"
	PERFMARK_SOCKET=$sock "$PERFMARK" session delete b >/dev/null 2>&1
	kill "$pmd_pid"; wait "$pmd_pid" 2>/dev/null; pmd_pid=
}
for r in $(seq "$rounds"); do
	if [ $((r % 2)) = 1 ]; then run mem; run file; else run file; run mem; fi
done
printf '\n2. perfmarkd draining a burst of %s markers into a ring session (medians)\n' "$marks"
printf '%-28s %12s %16s %14s %8s\n' ring "daemon cpu s" "cpu s / M markers" "markers/cpu s" ratio
mcpu=$(awk '{ print $1 / $2 * 1e6 }' "$W/d.mem" | median)
for k in mem file; do
	c=$(awk '{ print $1 }' "$W/d.$k" | median)
	per=$(awk '{ print $1 / $2 * 1e6 }' "$W/d.$k" | median)
	case $k in mem) n="--ring-dir none (before)";; file) n="--ring-dir $shm/...";; esac
	printf '%-28s %12.3f %16.3f %14.0f %8.2f\n' "$n" "$c" "$per" "$(calc "1e6 / $per")" "$(calc "$per / $mcpu")"
done
echo "(ratio: persistent / in memory; markers counted by the session: $(awk '{ print $2 }' "$W/d.file" | median) of $marks)"
