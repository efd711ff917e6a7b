#!/usr/bin/env bash
# Issue 8 cases 6 and 8 (reader side): `perfmark script` on files a hostile
# user hands over.  Each file is made here by tests/prog-crafted (the sizes
# of the issue's report) and must end with output or one clear error, in
# bounded memory, never hanging:
#   fifo      an MMAP names a FIFO: never opened (hung in open() before)
#   perfmap   /tmp/perf-PID.map is a FIFO: never opened
#   ids       4096 attrs x one shared 8 MB id array: refused (1.9 GB before)
#   cmdline   3.2 M CMDLINE arguments (quadratic before)
#   mmaps     200,000 MMAPs in one process (> 10 s before)
#   forks     20,000 forks of a 4096-map process (2.6 GB before)
#   ranges    60,000 unmatched ranges (7.6 s before)
#   zbomb     245 KB of zstd expanding to 1.3 GB: refused past the bound
# and the smaller defects: stock perf's PERF_SAMPLE_ID files (empty output,
# exit 0 before), `script >/dev/full` (exit 0 before), UBSan on --json.
#
# Issue 18 cases 2 and 3, for every command that reads a recording
# (report, flamegraph, export, script):
#   dwarf     a --call-graph dwarf sample whose mapping names a FIFO: the
#             unwinder opened it plainly and every command hung in open()
#   ranges    100,000 range ends matching no begin (report 58 s before)
#   nested    40,000 ranges nested in "outer", a sample in each
#             (report --by-marker 18 s, flamegraph --range outer 20 s)
#   leak      40,000 ranges begun and never ended, a sample in each
# each must load in under 1 s of CPU time (user + sys, so a loaded machine
# matters less; the lesser of two tries when the first is over): linear
# where it was quadratic.
#
# Bounds asserted: peak RSS (GNU time) within the stated bound of script.h,
# 32 MiB + 4 x (input + what it expands to, itself at most 64 MiB + 256 x
# the compressed input, perfread.h), and a CPU-time limit (ulimit -t 30)
# that only a runaway meets: every file here takes under a second now.
. "$(dirname "$0")/lib.sh"
need_perf
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
CRAFT=$PROGS/prog-crafted
[ -x "$CRAFT" ] || skip "no $CRAFT"
[ -x /usr/bin/time ] || skip "GNU time (package time) missing"
perfmap=/tmp/perf-4000123.map
trap 'rm -f "$perfmap"; cleanup' EXIT

# run NAME FILE [ARGS]: perfmark script under the CPU cap; sets RC, RSS_KB, ERR
run() {
	local name=$1 f=$2; shift 2
	( ulimit -t 30; exec /usr/bin/time -o "$T/$name.time" -f '%M' timeout -k 5 120 \
		"$PERFMARK" script -i "$f" "$@" ) >"$T/$name.out" 2>"$T/$name.err" </dev/null
	RC=$?
	RSS_KB=$(tail -n 1 "$T/$name.time" 2>/dev/null)
	ERR=$(grep -v '^Command ' "$T/$name.err" | head -n 1)
	[ "$RC" -le 1 ] || die "[$name] killed or hung (rc $RC: CPU limit, timeout or a signal)" -- "$T/$name.err"
	[ "$(grep -vc '^Command ' "$T/$name.err")" -le 1 ] || die "[$name] more than one line on stderr" -- "$T/$name.err"
	[ "$RC" -eq 0 ] || [[ $ERR == "perfmark: "* ]] || die "[$name] failed without a 'perfmark:' line" -- "$T/$name.err"
}

# craft NAME MODE ARGS...: $T/NAME.data; sets RAW (data bytes before compression)
craft() {
	local name=$1; shift
	RAW=$("$CRAFT" "$1" "$T/$name.data" "${@:2}" | sed -n 's/^raw //p')
	[ -n "$RAW" ] || die "prog-crafted $* failed"
}

# bound NAME: peak RSS within 32 MiB + 4 x (file + expanded, expansion capped as perfread.h says)
bound() {
	local size exp mb
	size=$(stat -c %s "$T/$1.data")
	exp=$RAW
	[ "$exp" -gt $((64 * 1048576 + 256 * size)) ] && exp=$((64 * 1048576 + 256 * size))
	mb=$(( 32 + 4 * (size + exp) / 1048576 ))
	[ "$RSS_KB" -le $((mb * 1024)) ] || die "[$1] peak RSS $((RSS_KB / 1024)) MB, bound $mb MB"
	ok "[$1] rc $RC, peak RSS $((RSS_KB / 1024)) MB (bound $mb MB)${ERR:+: $ERR}"
}

mkfifo "$T/fifo"
craft fifo fifo "$T/fifo"
run fifo "$T/fifo.data"
[ "$RC" -eq 0 ] || die "[fifo] failed" -- "$T/fifo.err"
# a file never read is still the frame's file: fifo+0xOFFSET (the file offset), then its path
grep -Eq "fifo\+0x[0-9a-f]+ \($T/fifo\)" "$T/fifo.out" ||
	die "[fifo] the sample is not shown by its file: fifo+0x... ($T/fifo)" -- "$T/fifo.out"
bound fifo

# cmd NAME ARGS...: perfmark ARGS under the CPU cap; sets RC, CPU (user + sys, s)
cmd() {
	local name=$1; shift
	( ulimit -t 30; exec /usr/bin/time -o "$T/$name.time" -f '%U %S' timeout -k 5 60 \
		"$PERFMARK" "$@" ) >"$T/$name.out" 2>"$T/$name.err" </dev/null
	RC=$?
	CPU=$(tail -n 1 "$T/$name.time" | awk '{ print $1 + $2 }')
	[ "$RC" -le 1 ] || die "[$name] perfmark $*: killed or hung (rc $RC)" -- "$T/$name.err"
}

craft dwarf dwarf "$T/fifo"
for c in report script "export --format collapsed" "flamegraph -o $T/dwarf.svg"; do
	cmd dwarf $c -i "$T/dwarf.data"
	[ "$RC" -eq 0 ] || die "[dwarf] perfmark $c failed" -- "$T/dwarf.err"
	[ -s "$T/dwarf.out" ] || [ -s "$T/dwarf.svg" ] || die "[dwarf] perfmark $c: no output"
	ok "[dwarf] $c: ends at once with output, the FIFO never opened"
done
grep -Eq "fifo\+0x[0-9a-f]+ \($T/fifo\)" <("$PERFMARK" script -i "$T/dwarf.data") ||
	die "[dwarf] script does not show the sample in the FIFO's mapping"

# cmd_bound NAME ARGS...: cmd, then under 1 s of CPU (issue 18's bound).
# Linear work takes 0.1-0.7 s here, the quadratic loader took 7-58 s on
# these files.  The same command on the same file takes 1.5-2x more CPU
# while the VM's host is busy, so a command over the bound runs once more,
# and the lesser of the two counts: a runaway is over it both times.
cmd_bound() {
	local first
	cmd "$@"
	if ! fcmp "$CPU < 1.0"; then
		first=$CPU
		cmd "$@"
		CPU=$(awk -v a="$first" -v b="$CPU" 'BEGIN { print (a < b ? a : b) }')
	fi
	fcmp "$CPU < 1.0" || die "[$1] $CPU s of CPU, twice: quadratic again? (bound 1 s)" -- "$T/$1.err"
}

craft ranges ranges 100000
for c in report "report --by-marker" "flamegraph -o $T/r.html" "export --format chrome"; do
	cmd_bound ranges $c -i "$T/ranges.data"
	ok "[ranges] $c: 100,000 unmatched ends in $CPU s of CPU"
done
craft nested nested 40000
for c in "report --by-marker" "report --range outer" "flamegraph --range outer -o $T/n.svg" \
	 "export --format pprof" \
	 "export --format chrome"; do
	cmd_bound nested $c -i "$T/nested.data"
	[ "$RC" -eq 0 ] || die "[nested] perfmark $c failed" -- "$T/nested.err"
	ok "[nested] $c: 40,000 nested ranges in $CPU s of CPU"
done
cmd nested report --by-marker -i "$T/nested.data"
grep -Eq '^outer +1 +0 .* +0 +40000$' "$T/nested.out" ||
	die "[nested] outer does not hold the 40,000 samples nested in it" -- "$T/nested.out"
craft leak leak 40000
cmd_bound leak report --by-marker -i "$T/leak.data"
[ "$RC" -eq 0 ] || die "[leak] failed" -- "$T/leak.err"
grep -Eq '^leak +0 +40000 .* 40000 +40000$' "$T/leak.out" ||
	die "[leak] not 40,000 open ranges holding their samples" -- "$T/leak.out"
ok "[leak] report --by-marker: 40,000 ranges never ended in $CPU s of CPU"

rm -f "$perfmap" && mkfifo "$perfmap"
craft perfmap perfmap 4000123
run perfmap "$T/perfmap.data"
[ "$RC" -eq 0 ] || die "[perfmap] failed" -- "$T/perfmap.err"
bound perfmap

craft ids ids 4096
run ids "$T/ids.data"
[ "$RC" -eq 1 ] && [[ $ERR == *"id sections claim more bytes than the file holds"* ]] ||
	die "[ids] not refused with a clear error: $ERR"
bound ids

for c in "cmdline 3200000" "mmaps 200000" "forks 20000"; do
	set -- $c
	craft "$1" "$1" "$2"
	run "$1" "$T/$1.data"
	[ "$RC" -eq 0 ] || die "[$1] failed: $ERR"
	bound "$1"
done

craft ranges ranges 60000
run ranges "$T/ranges.data"
[ "$RC" -eq 0 ] || die "[ranges] failed: $ERR"
[ "$(grep -c 'range begin' "$T/ranges.out")" -eq 60000 ] || die "[ranges] not every begin printed"
bound ranges

craft zbomb zbomb 40
run zbomb "$T/zbomb.data"
[ "$RC" -eq 1 ] && [[ $ERR == *"expands more than 256 times its size"* ]] ||
	die "[zbomb] not refused with a clear error: $ERR"
bound zbomb

# stock perf's PERF_SAMPLE_ID files: as many samples as perf script shows, per event
perf record -q -e cpu-clock,page-faults -o "$T/sid.data" -- "$PROGS/prog-spin" 0.3 >/dev/null 2>&1 ||
	die "perf record -e cpu-clock,page-faults failed"
perf evlist -v -i "$T/sid.data" 2>/dev/null | grep -q 'sample_type: [A-Z|]*|ID|' ||
	skip "this perf does not write PERF_SAMPLE_ID without IDENTIFIER"
perf record -q -e cpu-clock,page-faults -o - -- "$PROGS/prog-spin" 0.3 >"$T/sid.pipe" 2>/dev/null
for f in sid.data sid.pipe; do
	for ev in cpu-clock page-faults; do
		want=$(perf script -i "$T/$f" -F event 2>/dev/null | grep -c "^ *$ev:")
		got=$("$PERFMARK" script -i "$T/$f" 2>/dev/null | grep -c " $ev: ")
		[ "$want" -gt 0 ] && [ "$got" -eq "$want" ] ||
			die "[$f] $ev: perfmark script shows $got samples, perf script $want"
	done
	ok "[$f] PERF_SAMPLE_ID file: every cpu-clock and page-faults sample perf shows"
done

# output errors end the run with one line and status 1
"$PERFMARK" script -i "$T/sid.data" >/dev/full 2>"$T/full.err"
rc=$?
[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/full.err")" -eq 1 ] &&
	grep -q '^perfmark: write error: No space left on device' "$T/full.err" ||
	die "script >/dev/full: rc $rc" -- "$T/full.err"
ok "script >/dev/full: $(cat "$T/full.err")"

# --json on a marker without RAW and on a file without records, under UBSan:
# make check's sanitizer build (tests/run.sh passes it), or one made here
asan=${PERFMARK_ASAN_BUILD:-$PERFMARK_SRC/build-asan}
if [ ! -x "$asan/perfmark" ]; then
	asan=$T/build-asan
	echo "no sanitizer build: making one in $asan (make check has its own)"
	{ meson setup "$asan" "$PERFMARK_SRC" -Db_sanitize=address,undefined -Db_lundef=false &&
	  ninja -C "$asan" perfmark; } >"$T/asan-build.log" 2>&1 ||
		die "cannot build perfmark with ASan/UBSan" -- "$T/asan-build.log"
fi
craft noraw noraw
craft empty empty
for f in noraw empty; do
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
		"$asan/perfmark" script --json -i "$T/$f.data" >"$T/$f.json" 2>"$T/$f.ubsan" ||
		die "[$f] --json under ASan/UBSan" -- "$T/$f.ubsan"
done
ok "--json on a marker without RAW and on an empty file: clean under UBSan ($asan)"
echo "t-hostile-reader: all checks passed"
