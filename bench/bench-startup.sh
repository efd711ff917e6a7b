#!/usr/bin/env bash
# Start-up (issue 24): the whole `record -o FILE -- true`, from the
# recorder's start to its exit, of
#   perf       perf record -o FILE -- true
#   pm         perfmark record -o FILE -- true, in-process (PERFMARK_NO_DAEMON=1)
#   pm-ehframe the same with --call-graph ehframe (its unwinder's programs)
#   pmd        perfmark record -o FILE -- true through a perfmarkd of this
#              build (its own socket, state and pin dirs; --linger 60): a
#              recording with the options of the one before runs on the
#              programs that one loaded and verified (one warm-up first)
# in alternating rounds (the order rotates each round).  Each run is timed
# by bash's `time` (wall, and the recorder's own user+sys CPU; for pmd the
# daemon's CPU is read from /proc/PID/stat around the run and added).
# Ratios are paired per round (a round's perfmark run over the same round's
# perf run), median over rounds.  Goals: in-process <= 0.15 x perf's wall,
# through perfmarkd <= 0.05 x.
#
#   bash bench/bench-startup.sh [BUILD_DIR]
# Environment: BENCH_STARTUP_ROUNDS (11), BENCH_STARTUP_KINDS (perf pm pm-ehframe pmd).
. "$(dirname "$0")/lib.sh"
bench_setup bench-startup "$@"
rounds=${BENCH_STARTUP_ROUNDS:-11}
kinds=${BENCH_STARTUP_KINDS:-perf pm pm-ehframe pmd}
PERFMARKD=$build/perfmarkd

W=$(mktemp -d /tmp/perfmark-bench-startup.XXXXXX)
PINS=/sys/fs/bpf/perfmark-bench-startup-$$
pmd=
cleanup() {
	if [ -n "$pmd" ]; then
		kill "$pmd" 2>/dev/null
		wait "$pmd" 2>/dev/null
	fi
	rmdir "$PINS" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
has() { case " $kinds " in *" $1 "*) return 0;; esac; return 1; }

# the daemon's user+sys clock ticks (fields 14, 15 of /proc/PID/stat, after "(comm)")
pmd_ticks() { sed 's/.*) //' "/proc/$pmd/stat" | awk '{ print $12 + $13 }'; }
hz=$(getconf CLK_TCK)

if has pmd; then
	[ -x "$PERFMARKD" ] || die "no $PERFMARKD (build first)"
	"$PERFMARKD" --foreground --socket "$W/pmd.sock" --state-dir "$W/state" --pin-dir "$PINS" \
		--linger 60 >"$W/pmd.log" 2>&1 &
	pmd=$!
	for i in $(seq 100); do
		[ -S "$W/pmd.sock" ] && PERFMARK_SOCKET=$W/pmd.sock "$PERFMARK" session list >/dev/null 2>&1 && break
		sleep 0.1
	done
	[ -S "$W/pmd.sock" ] || { cat "$W/pmd.log" >&2; die "perfmarkd did not start"; }
fi

TIMEFORMAT='%3R %3U %3S'
# one_run KIND: appends "wall cpu" to $W/KIND.res
one_run() {
	local k=$1 t d0 d1 extra=0
	[ "$k" = pmd ] && d0=$(pmd_ticks)
	case $k in
	perf) t=$( { time perf record -q -o "$W/x.data" -- true >/dev/null 2>"$W/err"; } 2>&1 );;
	pm) t=$( { time PERFMARK_NO_DAEMON=1 "$PERFMARK" record -o "$W/y.data" -- true \
		>/dev/null 2>"$W/err"; } 2>&1 );;
	pm-ehframe) t=$( { time PERFMARK_NO_DAEMON=1 "$PERFMARK" record --call-graph ehframe \
		-o "$W/y.data" -- true >/dev/null 2>"$W/err"; } 2>&1 );;
	pmd) t=$( { time PERFMARK_NO_DAEMON=0 PERFMARK_SOCKET=$W/pmd.sock "$PERFMARK" record -v \
		-o "$W/y.data" -- true >/dev/null 2>"$W/err"; } 2>&1 );;
	esac
	if [ "$k" = pmd ]; then
		d1=$(pmd_ticks)
		extra=$(calc "($d1 - $d0) / $hz")
		grep -q 'via perfmarkd' "$W/err" ||
			{ cat "$W/err" >&2; die "pmd: the recording did not go through perfmarkd"; }
	fi
	# shellcheck disable=SC2086  # t: "wall user sys"
	set -- $t
	[ $# -eq 3 ] || { cat "$W/err" >&2; die "$k: no timing ($t)"; }
	echo "$1 $(calc "$2 + $3 + $extra")" >>"$W/$k.res"
}

echo "start-up: the whole \`record -o FILE -- true\`, $rounds rounds of: $kinds"
echo "  perf: $(perf version)   perfmark: $PERFMARK"
echo "  load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
# warm-up: the page cache, and perfmarkd's first recording (it loads and verifies)
for k in $kinds; do one_run "$k"; rm -f "$W/$k.res"; done
set -f
for r in $(seq "$rounds"); do
	# shellcheck disable=SC2086  # kinds: words
	for k in $(rotated "$r" $kinds); do one_run "$k"; done
done
set +f
echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

colmed() { awk -v c="$2" '{ print $c }' "$W/$1.res" | median; }
# paired KIND COL: median over rounds of KIND's COL / perf's COL in the same round
paired() { paste -d' ' "$W/$1.res" "$W/perf.res" | awk -v c="$2" '{ print $c / $(c + 2) }' | median; }
echo
echo "medians of $rounds rounds (wall: the recorder's start to its exit; cpu: its user+sys,"
echo "and perfmarkd's for pmd)"
printf '%-11s %10s %10s %12s %12s\n' kind "wall ms" "cpu ms" "wall / perf" "cpu / perf"
for k in $kinds; do
	if [ "$k" = perf ]; then wr=1 cr=1; else wr=$(paired "$k" 1) cr=$(paired "$k" 2); fi
	eval "ratio_${k//-/_}=$wr"
	printf '%-11s %10.1f %10.1f %12.3f %12.3f\n' "$k" "$(calc "$(colmed "$k" 1) * 1000")" \
		"$(calc "$(colmed "$k" 2) * 1000")" "$wr" "$cr"
done
echo
verdict() {
	awk -v n="$1" -v r="$2" -v g="$3" 'BEGIN {
		printf "%-60s %7.3f   (goal <= %s)  %s\n", n, r, g, (r <= g ? "PASS" : "FAIL") }'
}
has pm && verdict "record -- true in-process, wall / perf record's" "$ratio_pm" 0.15
has pmd && verdict "record -- true through perfmarkd, wall / perf record's" "$ratio_pmd" 0.05
exit 0
