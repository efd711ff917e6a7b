#!/usr/bin/env bash
# --max-stack N, as perf spells it (perf report/script's option, and the
# attr.sample_max_stack of perf_event_open): in `record` and `session create`,
# with fp and ehframe call graphs, no sample that perf script prints has more
# than N frames, kernel and user counted together as perf counts them; a
# recursion 300 deep shows exactly N; perf report's view of the file and its
# header say N; without the option, perf's default of 127 holds.  Bad values
# and a dwarf call graph (perf unwinds those copies itself) are one error line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ "$PM_RECORDER" = perf ] && skip "perf record has no --max-stack: perfmark's option"
[ -x "$PROGS/prog-unwind" ] && [ -x "$PROGS/prog-unwind-fp" ] || skip "no prog-unwind(-fp)"
export PERFMARK_NO_DAEMON=1   # record in process; the session part starts its own perfmarkd

# frames per sample of pid $2 in $1, as perf script prints them: "KERNEL USER" a line
frames_of() {
	perf script -i "$1" -F pid,ip,dso 2>/dev/null | awk -v p="$2" '
		BEGIN { RS = "" } { n = split($0, l, "\n"); if (l[1] + 0 != p) next
		k = 0; for (i = 2; i <= n; i++) if (l[i] ~ /\[kernel\.kallsyms\]/) k++
		print k, n - 1 - k }'
}

# "MAX EXACT SAMPLES MIXED" over frames_of's lines: the longest chain, how many
# have exactly N frames, how many in all, how many have kernel and user frames
depth_summary() {
	awk -v n="$1" '{ t = $1 + $2; if (t > m) m = t; if (t == n) e++; s++; if ($1 && $2) x++ }
		END { print m + 0, e + 0, s + 0, x + 0 }'
}

# check NAME FILE PID N: no chain of pid over N frames, nearly all exactly N
check() {
	local name=$1 file=$2 pid=$3 n=$4 max exact all mixed
	frames_of "$file" "$pid" >"$T/$name.frames"
	read -r max exact all mixed < <(depth_summary "$n" <"$T/$name.frames")
	[ "$all" -ge 200 ] || die "$name: perf script shows $all samples of pid $pid"
	[ "$max" -le "$n" ] || die "$name: a chain of $max frames with --max-stack $n" -- \
		<(sort -n "$T/$name.frames" | uniq -c)
	fcmp "$exact / $all >= 0.9" || die "$name: $exact of $all chains 300 calls deep have $n frames" -- \
		<(sort -n "$T/$name.frames" | uniq -c)
	# the clock_gettime calls of the workload: a kernel part and a user part, N together
	[ "$n" -lt 8 ] || [ "$mixed" -ge 1 ] || die "$name: no chain with kernel and user frames"
	ok "$name: $all samples, none over $n frames, $exact exactly $n, $mixed kernel and user together"
}

# --- --help of both commands shows it with perf's default -----------------------
for cmd in record "session create"; do
	# shellcheck disable=SC2086  # the command's words
	"$PERFMARK" $cmd --help >"$T/help" 2>&1 || die "$cmd --help failed" -- "$T/help"
	grep -A3 -- "--max-stack N" "$T/help" | tr -s ' \n' ' ' | grep -q "(default: 127)" ||
		die "$cmd --help does not give --max-stack with its default 127" -- "$T/help"
done
ok "--help of record and session create: --max-stack N (default: 127)"

# --- bad values: one line, exit 1, nothing recorded ---------------------------------
for bad in "0" "128" "-3" "10x" "" "99999999999999999999"; do
	"$PERFMARK" record -g --max-stack "$bad" -o "$T/bad.data" -- true >"$T/bad.out" 2>"$T/bad.err"
	rc=$?
	[ "$rc" -eq 1 ] || die "--max-stack '$bad': exit $rc, not 1" -- "$T/bad.err"
	[ "$(wc -l <"$T/bad.err")" -eq 1 ] && grep -q "^perfmark: .*--max-stack" "$T/bad.err" ||
		die "--max-stack '$bad': not one error line naming it" -- "$T/bad.err"
	[ ! -e "$T/bad.data" ] || die "--max-stack '$bad': a file was written"
done
for cg in "--call-graph dwarf" ""; do
	# shellcheck disable=SC2086  # no call graph, or dwarf's two words
	"$PERFMARK" record $cg --max-stack 10 -o "$T/bad.data" -- true 2>"$T/bad.err"
	rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/bad.err")" -eq 1 ] &&
		grep -q "^perfmark: --max-stack needs --call-graph fp or ehframe" "$T/bad.err" ||
		die "--max-stack with '${cg:-no call graph}': exit $rc" -- "$T/bad.err"
done
ok "--max-stack 0, 128, -3, 10x, empty, huge, with dwarf or no call graph: one error line, exit 1"

# --- record: fp and ehframe, 300 calls deep -------------------------------------------
rec() {   # NAME CG N PROG: record PROG recurse 300 with --call-graph CG --max-stack N
	"$PERFMARK" record --call-graph "$2" --max-stack "$3" --no-markers -o "$T/$1.data" -- \
		"$4" recurse 300 1.5 >"$T/$1.out" 2>"$T/$1.err" || die "$1: record failed" -- "$T/$1.err"
	pid=$(perf script -i "$T/$1.data" -F comm,pid 2>/dev/null | awk '$1 ~ /^prog-unwind/ { print $2; exit }')
	[ -n "$pid" ] || die "$1: no sample of prog-unwind" -- "$T/$1.err"
}
rec fp10 fp 10 "$PROGS/prog-unwind-fp"
check "record fp --max-stack 10" "$T/fp10.data" "$pid" 10
rec eh10 ehframe 10 "$PROGS/prog-unwind"
check "record ehframe --max-stack 10" "$T/eh10.data" "$pid" 10
rec eh1 ehframe 1 "$PROGS/prog-unwind"
check "record ehframe --max-stack 1" "$T/eh1.data" "$pid" 1

# the header says so where perf keeps it
perf report --header-only -i "$T/eh10.data" 2>/dev/null | grep -q "^# event : name = cpu-clock.*sample_max_stack = 10" ||
	die "perf report --header-only: no sample_max_stack = 10" -- <(perf report --header-only -i "$T/eh10.data" 2>&1)
perf evlist -v -i "$T/fp10.data" 2>/dev/null | grep -q "sample_max_stack: 10" ||
	die "perf evlist -v: no sample_max_stack: 10" -- <(perf evlist -v -i "$T/fp10.data" 2>&1)
ok "perf report --header-only and perf evlist -v: sample_max_stack = 10"

# perf report's own view: its longest call chain (-g flat) is the 10 frames
longest=$(perf report -i "$T/eh10.data" --stdio --no-children -g flat --comm prog-unwind 2>/dev/null | awk '
	/^ +[0-9.]+%$/ { if (n > m) m = n; n = 0; inside = 1; next }
	/^$/ { if (n > m) m = n; n = 0; inside = 0; next }
	inside && /^ +[^ ]/ { n++ } END { if (n > m) m = n; print m + 0 }')
[ "$longest" -eq 10 ] || die "perf report -g flat: the longest chain has $longest frames, not 10" -- \
	<(perf report -i "$T/eh10.data" --stdio --no-children -g flat --comm prog-unwind 2>&1 | head -n 60)
ok "perf report -g flat: the longest chain is 10 frames"

# --- the default: perf's 127 ------------------------------------------------------------
"$PERFMARK" record --call-graph ehframe --no-markers -o "$T/def.data" -- "$PROGS/prog-unwind" recurse 300 1 \
	>/dev/null 2>"$T/def.err" || die "default: record failed" -- "$T/def.err"
pid=$(perf script -i "$T/def.data" -F comm,pid 2>/dev/null | awk '$1 == "prog-unwind" { print $2; exit }')
check "record ehframe, no --max-stack" "$T/def.data" "$pid" 127
perf report --header-only -i "$T/def.data" 2>/dev/null | grep -q "sample_max_stack = 127" ||
	die "default: the header has no sample_max_stack = 127"

# --- --off-cpu: its offcpu-time samples hold N frames too ------------------------------
# (kernel stack taken when the thread comes back, user frames in what it leaves)
if [ -x "$PROGS/prog-offcpu" ]; then
	offcpu_frames() {   # FILE: the frames of each offcpu-time sample, one number a line
		perf script -i "$1" -F event,ip 2>/dev/null | awk '
			BEGIN { RS = "" } $1 ~ /^offcpu-time/ { print split($0, l, "\n") - 1 }'
	}
	for n in 4 127; do
		o=""
		[ $n = 4 ] && o="--max-stack 4"
		# shellcheck disable=SC2086  # the option's two words, or none
		"$PERFMARK" record --off-cpu=0 -g $o --no-markers -o "$T/off$n.data" -- "$PROGS/prog-offcpu" \
			>/dev/null 2>"$T/off$n.err" || die "--off-cpu $o: record failed" -- "$T/off$n.err"
		offcpu_frames "$T/off$n.data" | sort -n | uniq -c >"$T/off$n.frames"
		read -r all max < <(awk '{ s += $1; if ($2 > m) m = $2 } END { print s + 0, m + 0 }' "$T/off$n.frames")
		[ "$all" -ge 20 ] || die "--off-cpu $o: $all offcpu-time samples" -- "$T/off$n.frames"
		if [ $n = 4 ]; then
			[ "$max" -eq 4 ] || die "--off-cpu --max-stack 4: the longest offcpu-time chain has $max frames" -- "$T/off$n.frames"
		else   # the control: blocked in read, the chains are longer than 4
			[ "$max" -gt 4 ] || die "--off-cpu: no offcpu-time chain over 4 frames without --max-stack" -- "$T/off$n.frames"
		fi
	done
	ok "--off-cpu --max-stack 4: offcpu-time chains of 4 frames at most (over 4 without it)"
fi

# --- session create: the daemon records to it too ---------------------------------------
export PERFMARK_NO_DAEMON=0
daemon_start
for cg in fp ehframe; do
	prog=$PROGS/prog-unwind
	[ $cg = fp ] && prog=$PROGS/prog-unwind-fp
	pm session create "ms-$cg" -p $$ --call-graph $cg --max-stack 8 --no-markers ||
		die "session create --max-stack 8 ($cg) failed" -- "$T/pmd.log"
	pm session show "ms-$cg" | grep -q "call graph $cg, max stack 8" ||
		die "session show does not say max stack 8" -- <(pm session show "ms-$cg" 2>&1)
	pm session show "ms-$cg" --json | grep -q '"max_stack": *8' ||
		die "session show --json has no max_stack 8" -- <(pm session show "ms-$cg" --json 2>&1)
	"$prog" recurse 300 1.5 >/dev/null &
	p=$!
	wait "$p"
	pm session snapshot "ms-$cg" -o "$T/ms-$cg.data" || die "snapshot of ms-$cg failed" -- "$T/pmd.log"
	check "session create $cg --max-stack 8" "$T/ms-$cg.data" "$p" 8
	perf report --header-only -i "$T/ms-$cg.data" 2>/dev/null | grep -q "sample_max_stack = 8" ||
		die "session $cg: the header has no sample_max_stack = 8"
	pm session delete "ms-$cg" >/dev/null || die "session delete ms-$cg failed"
done
# a session's bad value is refused before the daemon is asked
pm session create ms-bad -g --max-stack 200 2>"$T/bad.err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "^perfmark: .*--max-stack" "$T/bad.err" || die "session create --max-stack 200: exit $rc" -- "$T/bad.err"
ok "session create --max-stack 200: one error line, exit 1"
