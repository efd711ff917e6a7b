#!/usr/bin/env bash
# Debian's own xz and python3 (no frame pointers): with --call-graph ehframe
# and dwarf, at least 95 % of their samples reach __libc_start_call_main as
# stock perf script shows the chains (libc6-dbg names it); with fp (-g) they
# do not, which is the difference these modes exist for.  perfmark report
# unwinds the dwarf recording to the same place.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/unwind-lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
command -v xz >/dev/null || die "xz not installed (xz-utils)"
[ -x /usr/bin/python3 ] || die "/usr/bin/python3 not installed"

head -c 1800000 /dev/urandom | base64 >"$T/in.txt"

modes="ehframe dwarf fp"
[ "$PM_RECORDER" = perf ] && modes="dwarf fp"     # ehframe is perfmark's own
for mode in $modes; do
	for prog in xz python3; do
		F=$T/$prog-$mode.data
		if [ "$prog" = xz ]; then
			cmd=(xz -6 -T1 -c "$T/in.txt")
		else
			cmd=(/usr/bin/python3 "$PERFMARK_SRC/tests/prog-pyloop.py")
		fi
		pm_record --call-graph "$mode" -o "$F" -- "${cmd[@]}" >/dev/null 2>"$T/rec.err" ||
			die "$prog --call-graph $mode: record failed" -- "$T/rec.err"
		read -r m n < <(chains_with "$F" "$prog" __libc_start_call_main)
		[ "$n" -ge 1000 ] || die "$prog $mode: only $n samples" -- "$T/rec.err"
		if [ "$mode" = fp ]; then
			fcmp "$m / $n < 0.5" ||
				die "$prog fp: $m of $n chains reach __libc_start_call_main: the test cannot tell the modes apart"
		else
			fcmp "$m / $n >= 0.95" ||
				die "$prog $mode: only $m of $n chains reach __libc_start_call_main"
		fi
		ok "$prog --call-graph $mode: $m of $n samples reach __libc_start_call_main ($(awk "BEGIN{printf \"%.1f\", 100*$m/$n}") %)"
	done
done

# perfmark's own reader unwinds the dwarf recording with libdw
[ "$PM_RECORDER" = perf ] && exit 0
"$PERFMARK" report -i "$T/xz-dwarf.data" --sort total >"$T/report" 2>&1 || die "perfmark report failed" -- "$T/report"
t=$(awk '$NF == "__libc_start_call_main" { sub("%", "", $2); print $2 }' "$T/report" | head -n 1)
fcmp "${t:-0} >= 95" || die "perfmark report: __libc_start_call_main has ${t:-0} % total on xz dwarf" -- "$T/report"
ok "perfmark report unwinds the dwarf recording: __libc_start_call_main $t % total"
