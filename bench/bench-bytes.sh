#!/usr/bin/env bash
# Bytes per sample (issue 24): the fixed CPU loop (bench/loop.c) recorded
# with `-F $BENCH_FREQ -g` by perfmark and by perf, uncompressed, read back
# with `perf report -D` (every record's size, by type):
#   sample     the SAMPLE records' bytes / samples: the encoding of a sample
#   data       the data section / samples: samples, sideband, rounds, ...
#   file       the whole file / samples (perf's features hold, besides, what
#              it knows of every BPF program loaded on the machine)
#   xz         the file through xz -6 / samples
# perf twice: as `perf record -g` writes a command's samples (no CPU field),
# and with --sample-cpu, the content perfmark's samples carry (the CPU each
# was taken on; perfmark has no PERIOD field where the period is fixed, and
# an IDENTIFIER, for its marker events).  Goal: perfmark's data section per
# sample <= perf's for the same sample content (--sample-cpu), the call
# chains' entries left out of both (their count is the content two runs
# differ in); beside it the raw ratio and the ratio to plain perf -g.
#
#   bash bench/bench-bytes.sh [BUILD_DIR]
# Environment: BENCH_BYTES_ITERS (loop iterations, default 40000000),
# BENCH_FREQ (4000).
. "$(dirname "$0")/lib.sh"
bench_setup bench-bytes "$@"
iters=${BENCH_BYTES_ITERS:-40000000}
export PERFMARK_NO_DAEMON=1
command -v xz >/dev/null || die "xz not installed (apt-get install xz-utils)"

W=$(mktemp -d /tmp/perfmark-bench-bytes.XXXXXX)
trap 'rm -rf "$W"' EXIT
build_loop

"$PERFMARK" record -F "$freq" -g -o "$W/pm.data" -- "$W/loop" "$iters" /dev/null \
	>/dev/null 2>"$W/pm.err" || { cat "$W/pm.err" >&2; die "perfmark record failed"; }
perf record -q -e cpu-clock -F "$freq" -g -o "$W/perf.data" -- "$W/loop" "$iters" /dev/null \
	>/dev/null 2>"$W/perf.err" || { cat "$W/perf.err" >&2; die "perf record failed"; }
perf record -q -e cpu-clock -F "$freq" -g --sample-cpu -o "$W/perfcpu.data" -- \
	"$W/loop" "$iters" /dev/null >/dev/null 2>"$W/perfcpu.err" ||
	{ cat "$W/perfcpu.err" >&2; die "perf record --sample-cpu failed"; }

# figures FILE: "samples sample_bytes data_bytes file_bytes xz_bytes sample_type"
figures() {
	local f=$1 data st
	perf report -D -i "$f" 2>/dev/null |
		sed -n 's/.*\[\(0x[0-9a-f]*\)\]: PERF_RECORD_\([A-Z_0-9]*\).*/\2 \1/p' |
		awk 'function hex(h,   i, v) { v = 0; h = tolower(substr(h, 3))
			for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
			return v }
		     { n[$1]++; b[$1] += hex($2) } END { printf "%d %d", n["SAMPLE"], b["SAMPLE"] }' \
		>"$W/fig"
	# the call-chain entries of all samples: 8 bytes each, the content that varies run to run
	perf report -D -i "$f" 2>/dev/null | sed -n 's/^\.\.\. FP chain: nr:\([0-9]*\).*/\1/p' |
		awk '{ s += $1 } END { printf " %d", s }' >>"$W/fig"
	data=$(perf report --header-only -i "$f" 2>/dev/null | sed -n 's/^# data size *: *//p')
	st=$(perf evlist -v -i "$f" 2>/dev/null | head -n 1 | sed -n 's/.*sample_type: \([A-Z|_]*\).*/\1/p')
	echo "$(cat "$W/fig") ${data:-0} $(stat -c %s "$f") $(xz -6 -c "$f" | wc -c) $st"
}
read -r pn ps pk pd pf px pst <<<"$(figures "$W/pm.data")"
read -r fn fs fk fd ff fx fst <<<"$(figures "$W/perf.data")"
read -r cn cs ck cd cf cx cst <<<"$(figures "$W/perfcpu.data")"
for v in "$pn" "$fn" "$cn"; do [ "$v" -gt 0 ] 2>/dev/null || die "a recording holds no samples"; done

echo "bytes per sample: loop of $iters iterations, -F $freq -g, uncompressed (perf report -D)"
printf '%-22s %8s %9s %9s %9s %9s  %s\n' recorder samples sample data file xz sample_type
row() {   # name n s d f x st
	printf '%-22s %8d %9.1f %9.1f %9.1f %9.1f  %s\n' "$1" "$2" "$(calc "$3 / $2")" \
		"$(calc "$4 / $2")" "$(calc "$5 / $2")" "$(calc "$6 / $2")" "$7"
}
row "perfmark -g" "$pn" "$ps" "$pd" "$pf" "$px" "$pst"
row "perf -g" "$fn" "$fs" "$fd" "$ff" "$fx" "$fst"
row "perf -g --sample-cpu" "$cn" "$cs" "$cd" "$cf" "$cx" "$cst"
echo
# The same sample content: two runs' samples differ in how many frames their
# chains hold (a sample in a page fault has a dozen kernel frames more), a few
# tenths of a byte a sample either way; the encoding is what is compared, so
# the chains' entries (8 bytes each) are taken out of both sides for the goal.
same=$(calc "(($pd - 8 * $pk) / $pn) / (($cd - 8 * $ck) / $cn)")
awk -v r="$same" -v a="$(calc "$pk / $pn")" -v b="$(calc "$ck / $cn")" 'BEGIN {
	printf "%-58s %6.3f  (goal <= 1)  %s\n",
	"data section per sample less its chain, perfmark / perf --sample-cpu", r, (r <= 1.0005 ? "PASS" : "FAIL")
	printf "%-58s %6.3f  (frames a sample: perfmark %.2f, perf %.2f)\n", "", 0, a, b }' |
	sed '2s/ 0.000 / /'
printf '%-58s %6.3f\n' "data section per sample, perfmark / perf --sample-cpu" "$(calc "($pd / $pn) / ($cd / $cn)")"
printf '%-58s %6.3f  (same samples: perfmark %.1f, perf %.1f bytes)\n' \
	"sample records per sample, perfmark / perf --sample-cpu" \
	"$(calc "($ps / $pn) / ($cs / $cn)")" "$(calc "$ps / $pn")" "$(calc "$cs / $cn")"
printf '%-58s %6.3f  (perf -g leaves out the CPU field: %.1f bytes a sample)\n' \
	"data section per sample, perfmark / perf -g" "$(calc "($pd / $pn) / ($fd / $fn)")" \
	"$(calc "$fs / $fn")"
printf '%-58s %6.3f\n' "whole file per sample, perfmark / perf -g" "$(calc "($pf / $pn) / ($ff / $fn)")"
printf '%-58s %6.3f\n' "xz -6 of the file per sample, perfmark / perf -g" "$(calc "($px / $pn) / ($fx / $fn)")"
