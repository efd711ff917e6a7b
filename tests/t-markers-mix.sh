#!/usr/bin/env bash
# Markers from two threads, a forked child and an exec'd child, plus typed
# markers of sizes 0 1 7 8 9 4095 4096 5000: every one must be in stock
# `perf script` and in `perfmark script --json` exactly once, per thread in
# program order, payloads byte-exact; the 5000-byte one truncated to 4096,
# flagged, and perfmark_emit returned -E2BIG for it.  Recorded three times:
# to a file, zstd-compressed (-z) and in pipe mode (-o -).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_markers

N=${MARKERS_N:-5000}    # per thread; the children emit N/4 each
M=$((N / 4))

# record MODE: record prog-markers mix into $F (file, zstd or pipe mode) and
# read what the program says it did (pids, tids, return codes).
record() {
	local mode=$1
	F=$T/mix-$mode.data
	case $mode in
	file) "$PERFMARK" record -o "$F" -- "$P" mix "$N" >"$T/prog.out" 2>"$T/rec.err";;
	zstd) "$PERFMARK" record -z -o "$F" -- "$P" mix "$N" >"$T/prog.out" 2>"$T/rec.err";;
	# in pipe mode the command's stdout goes to stderr
	pipe) "$PERFMARK" record -o - -- "$P" mix "$N" >"$F" 2>"$T/rec.err"
	      cp "$T/rec.err" "$T/prog.out";;
	esac
	rc=$?
	# the recorder's notices come before the command's first line, never inside its output
	awk '/^pid [0-9]+ / { started = 1 } started && /perfmark: / && !/^\[ perfmark record/ { bad = 1 } END { exit bad }' \
		"$T/rec.err" || die "$mode: a notice of the recorder is inside the command's output" -- "$T/rec.err"
	[ "$rc" -eq 0 ] || die "$mode: record exited $rc" -- "$T/rec.err" "$T/prog.out"
	grep -q '^done$' "$T/prog.out" || die "$mode: prog-markers did not finish" -- "$T/prog.out"

	e2big=$(sed -n 's/^E2BIG //p' "$T/prog.out")
	for s in 0 1 7 8 9 4095 4096; do
		grep -qx "emit size=$s rc=0" "$T/prog.out" || die "perfmark_emit size $s did not return 0" -- "$T/prog.out"
	done
	grep -qx "emit size=5000 rc=$e2big" "$T/prog.out" ||
		die "perfmark_emit size 5000 did not return -E2BIG ($e2big)" -- "$T/prog.out"
	grep -qx 'bad_rc 0' "$T/prog.out" || die "some marker calls returned an error" -- "$T/prog.out"
	grep -qx 'fork status 0' "$T/prog.out" || die "forked child failed (crash in a marker?)" -- "$T/prog.out"
	grep -qx 'exec status 0' "$T/prog.out" || die "exec'd child failed" -- "$T/prog.out"

	mainpid=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' "$T/prog.out")
	tid0=$(sed -n 's/^thread 0 tid \([0-9]*\) .*/\1/p' "$T/prog.out")
	tid1=$(sed -n 's/^thread 1 tid \([0-9]*\) .*/\1/p' "$T/prog.out")
	forkpid=$(sed -n 's/^fork child \([0-9]*\) .*/\1/p' "$T/prog.out")
	execpid=$(sed -n 's/^exec child \([0-9]*\) .*/\1/p' "$T/prog.out")
	[ -n "$mainpid" ] && [ -n "$tid0" ] && [ -n "$tid1" ] && [ -n "$forkpid" ] && [ -n "$execpid" ] ||
		die "cannot read pids/tids from the program's output" -- "$T/prog.out"
}

# one normalized line per marker: KIND PID TID TYPE FLAGS SIZE PAYLOAD, from
# norm_perf and norm_pm (markers-lib.sh)

# --- checks, for each reader -----------------------------------------------------
# SEQ type payload: u32 magic, u32 thread, u32 seq (little-endian hex)
TYPE_SEQ=65537
check_reader() {   # name normfile
	local name=$1 nf=$2 t kind want exp got sz tid p
	# thread t: "thr=t seq=S" (even S) and TYPE_SEQ (odd S), in order 0..N-1
	for t in 0 1; do
		eval "tid=\$tid$t"
		awk -v tid="$tid" -v t="$t" -v TS=$TYPE_SEQ "$MARKERS_AWK_HEX"'
			$3 != tid { next }
			$1 == "P" && $7 == "thr=" t { print $8; next }
			$1 == "P" { sub(/^seq=/, "", $8); if ($7 == "thr=" t) print $8; else print "bad:" $0; next }
			$1 == "U" && $4 == TS && $5 == 0 && $6 == 12 {
				if (le32($7, 0) != 1587150848 || le32($7, 4) != t) { print "bad:" $0; next }
				print le32($7, 8); next }
			{ print "bad:" $0 }' "$nf" | sed 's/^seq=//' >"$T/$name.thr$t"
		seq 0 $((N - 1)) >"$T/want.thr"
		cmp -s "$T/$name.thr$t" "$T/want.thr" ||
			die "$name: thread $t (tid $tid) markers are not seq 0..$((N - 1)) exactly once in order ($(wc -l <"$T/$name.thr$t") seen; first difference: $(diff "$T/want.thr" "$T/$name.thr$t" | sed -n 2p))"
	done
	ok "$name: 2 threads x $N markers (printf + typed), each once, in order"
	for kind in fork exec; do
		eval "p=\$${kind}pid"
		awk -v p="$p" '$2 == p { if ($1 == "P") print $7, $8; else print "bad:" $0 }' "$nf" >"$T/$name.$kind"
		seq 0 $((M - 1)) | sed "s/^/$kind seq=/" >"$T/want.$kind"
		cmp -s "$T/$name.$kind" "$T/want.$kind" ||
			die "$name: $kind child (pid $p) markers are not seq 0..$((M - 1)) exactly once in order ($(wc -l <"$T/$name.$kind") seen; first difference: $(diff "$T/want.$kind" "$T/$name.$kind" | sed -n 2p))"
	done
	ok "$name: forked and exec'd children, $M markers each, in order"
	# typed sizes, byte-exact
	while read -r _ type exp; do
		sz=$((type - 75536))
		want=0; [ "$sz" -gt 4096 ] && want=1
		[ "$exp" = "" ] && exp=-
		got=$(awk -v ty="$type" '$1 == "U" && $4 == ty' "$nf")
		[ "$(printf '%s\n' "$got" | grep -c .)" -eq 1 ] ||
			die "$name: size $sz marker (type $type) seen $(printf '%s\n' "$got" | grep -c .) times, want 1"
		read -r _ gpid _ _ gfl gsz gdata _ <<<"$got"
		[ "$gpid" = "$mainpid" ] || die "$name: size $sz marker has pid $gpid, want $mainpid"
		[ "$gfl" = "$want" ] || die "$name: size $sz marker flags $gfl, want $want (1 = truncated)"
		[ "$gsz" -eq $((sz > 4096 ? 4096 : sz)) ] || die "$name: size $sz marker recorded $gsz bytes"
		[ "$gdata" = "$exp" ] || die "$name: size $sz marker payload differs (got ${gdata:0:40}..., want ${exp:0:40}...)"
	done < <(grep '^expect ' "$T/prog.out")
	ok "$name: typed markers of sizes 0 1 7 8 9 4095 4096 5000 byte-exact; 5000 -> 4096, truncated"
	# nothing else from our processes
	local total=$(awk -v a="$mainpid" -v b="$forkpid" -v c="$execpid" '$2 == a || $2 == b || $2 == c' "$nf" | wc -l)
	[ "$total" -eq $((2 * N + 2 * M + 8)) ] ||
		die "$name: $total markers from the program's processes, want $((2 * N + 2 * M + 8))"
}

for mode in file zstd pipe; do
	record "$mode"
	[ "$mode" = file ] && ok "return codes: 0 for sizes <= 4096, $e2big (-E2BIG) for 5000"
	norm_perf "$F" >"$T/perf.norm"
	norm_pm "$F" >"$T/pm.norm"
	[ -s "$T/perf.norm" ] || die "$mode: perf script shows no perfmark markers" -- "$T/rec.err"
	[ -s "$T/pm.norm" ] || die "$mode: perfmark script --json shows no markers" -- "$T/rec.err"
	check_reader "perf-$mode" "$T/perf.norm"
	# stock perf also shows the header: version 1, orig_size
	awk '$1 == "U" && $4 == 80536 { if ($8 != 1 || $9 != 5000) exit 1; f = 1 } END { exit !f }' "$T/perf.norm" ||
		die "perf/$mode: the 5000-byte marker's header is not version 1 / orig_size 5000: $(awk '$1 == "U" && $4 == 80536 { $7 = "..."; print }' "$T/perf.norm")"
	check_reader "perfmark-$mode" "$T/pm.norm"
	grep -a '"type":80536' <("$PERFMARK" script -i "$F" --json 2>/dev/null) | grep -q '"orig_size":5000' ||
		die "perfmark/$mode: script --json prints no orig_size 5000 for the truncated marker"

	# the summary line counts what is in the file
	sm=$(sed -n 's/.*samples, \([0-9]*\) markers,.* \([0-9]*\) lost markers.*/\1 \2/p' "$T/rec.err")
	read -r smark slost <<<"$sm"
	[ "${slost:-x}" = 0 ] || die "$mode: record reports lost markers ($slost)" -- "$T/rec.err"
	[ "$smark" -eq "$(wc -l <"$T/pm.norm")" ] ||
		die "$mode: summary says $smark markers, the file holds $(wc -l <"$T/pm.norm")" -- "$T/rec.err"
	ok "$mode: summary: $smark markers, 0 lost; perf and perfmark script agree"
	rm -f "$F"
done
echo "t-markers-mix: all checks passed"
