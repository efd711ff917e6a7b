# shellcheck shell=bash
# Set-up shared by the recorder benchmarks bench/run.sh and bench/bench-zstd.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   bench_setup NAME "$@"       # NAME prefixes die's messages
#
# Sets here (bench/), build, PERFMARK, rounds, iters, freq; checks root, the
# perfmark binary, perf and /usr/bin/time; mounts bpffs.  Then, with the work
# directory in W: build_loop, and median, calc, col, rec_cpu for the results.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "$bench_name: $*" >&2; exit 1; }

# bench_setup NAME [BUILD_DIR]: BUILD_DIR defaults to the checkout's build/.
# Environment: PERFMARK, BENCH_ROUNDS (5), BENCH_ITERS (40000000), BENCH_FREQ (4000).
bench_setup() {
	bench_name=$1
	build=$(cd "${2:-$here/../build}" && pwd) || exit 1
	PERFMARK=${PERFMARK:-$build/perfmark}
	# shellcheck disable=SC2034  # for the scripts that source this
	rounds=${BENCH_ROUNDS:-5} iters=${BENCH_ITERS:-40000000} freq=${BENCH_FREQ:-4000}

	[ "$(id -u)" -eq 0 ] || die "needs root"
	[ -x "$PERFMARK" ] || die "no perfmark binary at $PERFMARK (build first)"
	perf version >/dev/null 2>&1 || die "perf (linux-perf) not installed"
	[ -x /usr/bin/time ] || die "/usr/bin/time missing (apt-get install time)"
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null
}

# record_as KIND OUT CMD...: CMD bare, or under one call-graph mode of perf
# or perfmark at -F $freq (perf on cpu-clock, where perfmark falls back to
# here), writing OUT.  KIND: bare perf-g perf-dwarf pm-fp pm-ehframe
# pm-dwarf pm-fp-z pm-ehframe-z (pm-ehframe with -v: its unwinder figures
# on stderr).  The files written before are synced first: their writeback
# (perf's dwarf files are 30-200 MB) must not land in this run's time.
# For bench-unwind.sh and bench-slowdown.sh.
record_as() {
	local kind=$1 out=$2
	shift 2
	sync
	case $kind in
	bare) "$@";;
	perf-g) perf record -q -e cpu-clock -F "$freq" -g -o "$out" -- "$@";;
	perf-dwarf) perf record -q -e cpu-clock -F "$freq" --call-graph dwarf -o "$out" -- "$@";;
	pm-fp) "$PERFMARK" record -F "$freq" -g -o "$out" -- "$@";;
	pm-ehframe) "$PERFMARK" record -v -F "$freq" --call-graph ehframe -o "$out" -- "$@";;
	pm-dwarf) "$PERFMARK" record -F "$freq" --call-graph dwarf -o "$out" -- "$@";;
	pm-fp-z) "$PERFMARK" record -z -F "$freq" -g -o "$out" -- "$@";;
	pm-ehframe-z) "$PERFMARK" record -z -F "$freq" --call-graph ehframe -o "$out" -- "$@";;
	*) die "no such kind: $kind";;
	esac
}

# The fixed-work loop (bench/loop.c) as $W/loop, with frame pointers for -g.
build_loop() {
	cc -O2 -fno-omit-frame-pointer -Wall -Wextra -o "$W/loop" "$here/loop.c" ||
		die "cannot build bench/loop.c"
}

# median of the numbers on stdin, one a line ("nan" when there are none)
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "nan"; exit }
	print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# rotated R KIND...: the kinds in round R's order (started R places on), so
# that drift over a run hits every kind alike
rotated() { local r=$1; shift; local n=$#
	printf '%s\n' "$@" | awk -v s=$((r % n)) -v n="$n" \
		'{ k[NR - 1] = $0 } END { for (i = 0; i < n; i++) printf "%s ", k[(i + s) % n] }'; }
# calc EXPR: EXPR (awk syntax) evaluated and printed
calc() { awk "BEGIN { print ($1) }"; }
# Runs of KIND append one line of space-separated columns to $W/KIND.res,
# the loop's wall time first, its own CPU time second, the recorder's and
# its children's total CPU third.
# col KIND N: median of column N
col() { awk -v c="$2" '{ print $c }' "$W/$1.res" | median; }
# rec_cpu KIND: median of the recorder's own CPU time (total - the loop's)
rec_cpu() { awk '{ print $3 - $2 }' "$W/$1.res" | median; }

# The multi-threaded marker workload bench/report-load.c as $W/load.
build_report_load() {
	local src
	src=$(cd "$here/.." && pwd)
	cc -O2 -fno-omit-frame-pointer -fno-inline -Wall -Wextra -I"$src/include" -o "$W/load" \
		"$here/report-load.c" -L"$build" -lperfmark -Wl,-rpath,"$build" -lpthread ||
		die "cannot build bench/report-load.c"
}

# load_secs MB: seconds of `perfmark record -g -F 20000 -- $W/load` that write
# about MB MB (1 s and 3 s runs tell the rate), 1 to 120
load_secs() {
	local s rate secs
	for s in 1 3; do
		"$PERFMARK" record -g -F 20000 -o "$W/probe$s.data" -- "$W/load" "$s" >/dev/null 2>"$W/rec.err" ||
			{ cat "$W/rec.err" >&2; die "perfmark record failed"; }
	done
	rate=$(calc "($(stat -c %s "$W/probe3.data") - $(stat -c %s "$W/probe1.data")) / 2")
	secs=$(calc "int($1 * 1048576 / ($rate > 0 ? $rate : 1) + 0.5)")
	[ "$secs" -lt 1 ] && secs=1
	[ "$secs" -gt 120 ] && secs=120
	echo "$secs"
}
