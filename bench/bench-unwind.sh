#!/usr/bin/env bash
# Call-graph modes against perf, side by side: Debian's own xz and python3
# (no frame pointers), each run bare and under
#   perf record -g | perf record --call-graph dwarf |
#   perfmark record -g (fp) | --call-graph ehframe | --call-graph dwarf
# all at -F $BENCH_FREQ (4000) on cpu-clock, BENCH_ROUNDS rounds in rotating
# order.  The program's own wall and CPU time (/usr/bin/time around it) give
# its slowdown; the file sizes and ehframe's table memory (record -v) come
# with them.  Reported as medians and as the ratios issue 12 asks for:
#   ehframe overhead / perf -g overhead          (goal <= 1.5)
#   ehframe file / perfmark fp file              (goal <= 1.5)
#   perf dwarf file / ehframe file               (goal >= 50)
#   perfmark dwarf overhead / perf dwarf overhead, file / file  (goal <= 1.1)
#   (and the time under perfmark dwarf / the time under perf dwarf)
#   and, for the file sizes, the same with -z (zstd) on fp and ehframe
#   ehframe table memory for python3             (goal < 32 MB)
#
#   bash bench/bench-unwind.sh [BUILD_DIR]
. "$(dirname "$0")/lib.sh"
bench_setup bench-unwind "$@"
command -v xz >/dev/null || die "xz not installed"
[ -x /usr/bin/python3 ] || die "/usr/bin/python3 not installed"

W=$(mktemp -d /tmp/perfmark-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
# fixed work, about 2 s each
head -c 2500000 /dev/urandom | base64 >"$W/in.txt"

kinds="bare perf-g perf-dwarf pm-fp pm-ehframe pm-dwarf pm-fp-z pm-ehframe-z"

# run PROG KIND ROUND: appends "wall cpu size" to $W/PROG.KIND.res
run() {
	local prog=$1 kind=$2 out=$W/$1.$2.data res=$W/time cmd
	rm -f "$out" "$res"
	# bash's time: milliseconds (GNU time's %U has only hundredths)
	case $prog in
	xz) cmd=(bash -c 'TIMEFORMAT="%3R %3U %3S"; { time "$@" >/dev/null; } 2>"$0"' "$res"
		 xz -6 -T1 -c "$W/in.txt");;
	python3) cmd=(bash -c 'TIMEFORMAT="%3R %3U %3S"; { time "$@" >/dev/null; } 2>"$0"' "$res"
		      /usr/bin/python3 "$here/../tests/prog-pyloop.py");;
	esac
	if [ "$kind" = pm-ehframe ]; then
		record_as "$kind" "$out" "${cmd[@]}" >/dev/null 2>"$W/$prog.unwound"
	else
		record_as "$kind" "$out" "${cmd[@]}" >/dev/null 2>>"$W/err"
	fi
	[ -s "$res" ] || { tail -5 "$W/err" >&2; die "$prog under $kind failed"; }
	local size=0
	[ -f "$out" ] && size=$(stat -c %s "$out")
	read -r wall u s < <(tail -n 1 "$res")
	echo "$wall $(calc "$u + $s") $size" >>"$W/$prog.$kind.res"
}

m() { awk -v c="$3" '{ print $c }' "$W/$1.$2.res" | median; }   # PROG KIND COLUMN

echo "call-graph modes: xz -6 -T1 (2.5 MB of base64) and python3 (a loop), -F $freq, $rounds rounds"
echo "  load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs (others' jobs make wall times noisy)"
"$PERFMARK" record --call-graph ehframe -o "$W/warm.data" -- true >/dev/null 2>&1
read -ra all <<<"$kinds"
for r in $(seq "$rounds"); do
	# rotate the order each round so drift hits every kind alike
	k0=$((r % ${#all[@]}))
	order="${all[*]:k0} ${all[*]:0:k0}"
	for prog in xz python3; do
		for k in $order; do run "$prog" "$k"; done
	done
	printf '  round %d/%d done\n' "$r" "$rounds"
done

for prog in xz python3; do
	bw=$(m "$prog" bare 1); bc=$(m "$prog" bare 2)
	echo
	echo "$prog: medians; overhead = time under the tool / bare time - 1"
	printf '%-13s %8s %9s %8s %9s %10s\n' tool "wall s" overhead "cpu s" overhead "file MiB"
	for k in $kinds; do
		w=$(m "$prog" "$k" 1); c=$(m "$prog" "$k" 2); z=$(m "$prog" "$k" 3)
		eval "ow_${k//-/_}=$(calc "$w / $bw - 1")" "oc_${k//-/_}=$(calc "$c / $bc - 1")" "sz_${k//-/_}=$z"
		printf '%-13s %8.3f %8.1f%% %8.3f %8.1f%% %10.3f\n' "$k" "$w" "$(calc "($w / $bw - 1) * 100")" \
			"$c" "$(calc "($c / $bc - 1) * 100")" "$(calc "$z / 1048576")"
	done
	ratio() { awk "BEGIN { if ($2 <= 0.0005) print \"n/a (perf's overhead too small to divide by)\"; else printf \"%.2f\", $1 / $2 }"; }
	echo "  ehframe overhead / perf -g overhead:    wall $(ratio "$ow_pm_ehframe" "$ow_perf_g"), cpu $(ratio "$oc_pm_ehframe" "$oc_perf_g")   (goal <= 1.5)"
	echo "  ehframe file / perfmark fp file:        $(calc "$sz_pm_ehframe / $sz_pm_fp")   (goal <= 1.5)"
	echo "  perf dwarf file / ehframe file:         $(calc "$sz_perf_dwarf / $sz_pm_ehframe")   (goal >= 50)"
	echo "  perfmark dwarf / perf dwarf overhead:   wall $(ratio "$ow_pm_dwarf" "$ow_perf_dwarf"), cpu $(ratio "$oc_pm_dwarf" "$oc_perf_dwarf")   (goal <= 1.1)"
	echo "    time under perfmark dwarf / under perf dwarf: wall $(calc "(1 + $ow_pm_dwarf) / (1 + $ow_perf_dwarf)"), cpu $(calc "(1 + $oc_pm_dwarf) / (1 + $oc_perf_dwarf)")"
	echo "  perfmark dwarf file / perf dwarf file:  $(calc "$sz_pm_dwarf / $sz_perf_dwarf")   (goal <= 1.1)"
	echo "  with -z on both (zstd; stock perf reads it): ehframe -z file / fp -z file $(calc "$sz_pm_ehframe_z / $sz_pm_fp_z"),"
	echo "    ehframe -z file / fp file $(calc "$sz_pm_ehframe_z / $sz_pm_fp"), perf dwarf file / ehframe -z file $(calc "$sz_perf_dwarf / $sz_pm_ehframe_z")"
	echo "  ehframe: $(grep -o 'unwound .*' "$W/$prog.unwound" | sed 's/^unwound //; s/ ]$//')"
done
