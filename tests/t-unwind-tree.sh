#!/usr/bin/env bash
# A call tree six deep built -O2 -fomit-frame-pointer (prog-unwind tree,
# which measures each function's own CPU time): stock perf report --children
# gives every function's total within 3 points of the truth with
# --call-graph ehframe and dwarf; with fp some level is further off, so the
# check can fail.  Built with frame pointers (prog-unwind-fp), ehframe is
# as accurate as fp, and at least as many of its chains reach main.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/unwind-lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
[ -x "$PROGS/prog-unwind" ] || skip "no $PROGS/prog-unwind"

# truth: total(f) = self(f) + totals of its callees, as % of all self time
truth() {
	awk '$1 == "self" { s[$2] = $3; all += $3 }
	END {
		t["t6"] = s["t6"]; t["t5"] = s["t5"] + t["t6"]; t["t4"] = s["t4"] + t["t5"]
		t["s4"] = s["s4"]; t["t3"] = s["t3"] + t["t4"] + t["s4"]
		t["t2"] = s["t2"] + t["t3"]; t["t1"] = s["t1"] + t["t2"]
		for (f in t) printf "%s %.2f\n", f, 100 * t[f] / all
	}' "$1"
}

# check PROG MODE: every level within 3 points (fp on prog-unwind: some level is not)
check() {
	local prog=$1 mode=$2 F=$T/tree-$1-$2.data worst=0 f want got d
	pm_record --call-graph "$mode" -o "$F" -- "$PROGS/$prog" tree 3 >"$T/out" 2>"$T/rec.err" ||
		die "--call-graph $mode: record failed" -- "$T/rec.err"
	truth "$T/out" >"$T/truth"
	report_children "$F" >"$T/children"
	for f in t1 t2 t3 t4 t5 t6 s4; do
		want=$(awk -v f=$f '$1 == f { print $2 }' "$T/truth")
		got=$(pct_of "$T/children" $f)
		d=$(awk "BEGIN { d = $got - $want; print d < 0 ? -d : d }")
		fcmp "$d > $worst" && worst=$d
		[ "$prog/$mode" = prog-unwind/fp ] && continue
		fcmp "$d <= 3" || {
			perf script -i "$F" --show-mmap-events 2>/dev/null | grep -E "MMAP.*$prog\$" >"$T/mmaps"
			die "$prog --call-graph $mode: $f total $got %, truth $want %" -- "$F.rows" "$T/truth" "$T/mmaps"
		}
		echo "  $prog $mode $f: $got % (truth $want %)"
	done
	if [ "$prog/$mode" = prog-unwind/fp ]; then
		fcmp "$worst > 3" || die "fp: every level within 3 points: the workload has frame pointers after all?"
		ok "$prog fp: a level is $worst points off, as expected without frame pointers"
	else
		ok "$prog --call-graph $mode: every level within $worst points of the truth"
	fi
}

modes="ehframe dwarf fp"
[ "$PM_RECORDER" = perf ] && modes="dwarf fp"
for mode in $modes; do
	check prog-unwind "$mode"
done

# frame-pointer code: ehframe as complete as fp
[ -x "$PROGS/prog-unwind-fp" ] || die "no $PROGS/prog-unwind-fp"
modes="fp ehframe"
[ "$PM_RECORDER" = perf ] && modes="fp"
for mode in $modes; do
	check prog-unwind-fp "$mode"
	read -r m n < <(chains_with "$T/tree-prog-unwind-fp-$mode.data" prog-unwind-fp main)
	eval "reach_$mode=$m total_$mode=$n"
	ok "prog-unwind-fp $mode: $m of $n chains reach main"
done
[ "$PM_RECORDER" = perf ] && exit 0
fcmp "$reach_ehframe / $total_ehframe >= $reach_fp / $total_fp - 0.005" ||
	die "on frame-pointer code ehframe reaches main less often than fp ($reach_ehframe/$total_ehframe vs $reach_fp/$total_fp)"
ok "frame-pointer code: ehframe at least as complete as fp"
