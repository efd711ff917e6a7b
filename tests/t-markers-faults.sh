#!/usr/bin/env bash
# Awkward markers must never crash the program and must be flagged clearly:
#  - perfmark_emit(type, (void *)1, 16): an unmapped pointer -> a record with
#    the fault flag, no data; a range whose second half is unmapped: the same;
#  - perfmark_emit(type, NULL, 16) returns -EINVAL and records nothing;
#  - size 0 (NULL or valid pointer) -> a record with size 0 and no flags;
#  - perf_printf("") -> an empty string marker;
#  - perfmark_emit from SIGALRM (every 0.5 ms) and SIGUSR1 handlers while the
#    main flow emits markers of its own: every marker of each kind recorded
#    exactly once, in order, unflagged.
# Checked in stock perf script (uevent header decoded from the BPF output
# hex) and in perfmark script --json.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_markers

F=$T/faults.data
"$PERFMARK" record -o "$F" -- "$P" faults >"$T/prog.out" 2>"$T/rec.err"
rc=$?
[ "$rc" -eq 0 ] || die "record exited $rc (the program crashed?)" -- "$T/rec.err" "$T/prog.out"
grep -qx 'done' "$T/prog.out" || die "prog-markers faults did not finish" -- "$T/prog.out"
for w in fault null0 empty emptystr partial; do
	grep -qx "$w rc 0" "$T/prog.out" || die "$w: unexpected return code" -- "$T/prog.out"
done
grep -qx 'nullsz rc -22' "$T/prog.out" || die "perfmark_emit(t, NULL, 16) did not return -EINVAL" -- "$T/prog.out"
grep -qx 'sig rc 0' "$T/prog.out" || die "a marker in a signal handler returned an error" -- "$T/prog.out"
ok "no crash; return codes as documented (NULL with size 16: -EINVAL)"
nalrm=$(sed -n 's/^count sigalrm //p' "$T/prog.out")
nusr1=$(sed -n 's/^count sigusr1 //p' "$T/prog.out")
nmain=$(sed -n 's/^count mainloop //p' "$T/prog.out")
[ "$nalrm" -gt 50 ] || die "only $nalrm SIGALRM handler runs" -- "$T/prog.out"

# one line per marker: KIND PID TID TYPE FLAGS SIZE PAYLOAD (markers-lib.sh)
norm_perf "$F" >"$T/perf.norm"
norm_pm "$F" >"$T/pm.norm"

T_FAULT=65538 T_NULLSZ=65539 T_NULL0=65540 T_EMPTY=65541 T_PARTIAL=65542
T_ALRM=65543 T_USR1=65544 T_MAIN=65545
check_reader() {   # name normfile
	local name=$1 nf=$2 got
	one() {   # type flags size payload what
		got=$(awk -v ty="$1" '$1 == "U" && $4 == ty { print $5, $6, $7 }' "$nf")
		[ "$got" = "$2 $3 $4" ] || die "$name: $5: want one record 'flags $2 size $3 data $4', got '$got'"
	}
	one $T_FAULT 2 0 - "perfmark_emit(t, (void *)1, 16)"
	one $T_PARTIAL 2 0 - "16 bytes, the last 8 unmapped"
	one $T_NULL0 0 0 - "perfmark_emit(t, NULL, 0)"
	one $T_EMPTY 0 0 - "perfmark_emit(t, buf, 0)"
	[ "$(awk -v ty=$T_NULLSZ '$4 == ty' "$nf" | wc -l)" -eq 0 ] ||
		die "$name: perfmark_emit(t, NULL, 16) was recorded although it returned -EINVAL"
	got=$(awk '$1 == "P" && NF == 6' "$nf" | wc -l)
	[ "$got" -eq 1 ] || die "$name: want one empty perf_printf string, got $got"
	ok "$name: fault flag on unmapped pointers; size 0 and empty string unflagged; -EINVAL call not recorded"
	# handler markers: u32 magic, u32 n (n = 0, 1, ... in order), no flags
	sigseq() {   # type magic-hex
		awk -v ty="$1" -v mg="$2" "$MARKERS_AWK_HEX"'
			$4 == ty { if ($5 != 0 || $6 != 8 || substr($7, 1, 8) != mg) { print "bad " $0; next }
				print le32($7, 4) }' "$nf"
	}
	sigseq $T_ALRM a1a1a1a1 >"$T/$name.alrm"
	seq 0 $((nalrm - 1)) | cmp -s - "$T/$name.alrm" ||
		die "$name: SIGALRM markers are not 0..$((nalrm - 1)) once each in order ($(wc -l <"$T/$name.alrm") seen)"
	sigseq $T_USR1 a105a105 >"$T/$name.usr1"
	seq 0 $((nusr1 - 1)) | cmp -s - "$T/$name.usr1" ||
		die "$name: SIGUSR1 markers are not 0..$((nusr1 - 1)) once each in order ($(wc -l <"$T/$name.usr1") seen)"
	# main flow: u64 n, in order
	got=$(awk -v ty=$T_MAIN "$MARKERS_AWK_HEX"'
		$4 == ty { n = le32($7, 0)
			if ($5 != 0 || $6 != 8 || n != k) bad++; k++ }
		END { print k + 0, bad + 0 }' "$nf")
	[ "$got" = "$nmain 0" ] || die "$name: main-flow markers: 'count bad' = '$got', want '$nmain 0'"
	ok "$name: $nalrm SIGALRM + $nusr1 SIGUSR1 handler markers and $nmain main-flow markers, each once, in order"
}
check_reader perf "$T/perf.norm"
# stock perf shows the header's orig_size: the 16 bytes asked for
awk -v ty=$T_FAULT '$4 == ty && $9 == 16 { f = 1 } END { exit !f }' "$T/perf.norm" ||
	die "perf: the faulting marker's header does not carry orig_size 16"
check_reader perfmark "$T/pm.norm"
grep -a "\"type\":$T_FAULT," <("$PERFMARK" script -i "$F" --json 2>/dev/null) | grep -q '"fault":true' ||
	die "perfmark script --json does not say fault:true for the unmapped pointer"
ok "fault flag shown by both readers"
echo "t-markers-faults: all checks passed"
