#!/usr/bin/env bash
# A library dlopen()ed half a second after the recording started (built
# without frame pointers): its samples still have whole stacks, through the
# library's frames to main (ehframe: its table is loaded when the mapping
# appears in the sideband; dwarf: perf's own unwinding).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/unwind-lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
LIB=$PROGS/libprog-unwind-dl.so
[ -x "$PROGS/prog-unwind" ] && [ -f "$LIB" ] || skip "no prog-unwind or $LIB"

modes="ehframe dwarf"
[ "$PM_RECORDER" = perf ] && modes="dwarf"
for mode in $modes; do
	F=$T/dl-$mode.data
	pm_record --call-graph "$mode" -o "$F" -- "$PROGS/prog-unwind" dlopen "$LIB" 2 >/dev/null 2>"$T/rec.err" ||
		die "--call-graph $mode: record failed" -- "$T/rec.err"
	read -r m n < <(chains_with "$F" prog-unwind main unwind_dl_middle)
	[ "$n" -ge 1000 ] || die "$mode: only $n samples in the library's frames" -- "$T/rec.err"
	fcmp "$m / $n >= 0.95" || die "$mode: $m of $n samples in the library reach main" -- "$T/rec.err"
	ok "--call-graph $mode: $m of $n samples through the dlopen()ed library reach main"
done
