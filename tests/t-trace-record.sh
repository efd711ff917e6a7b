#!/usr/bin/env bash
# record -e sched:sched_switch,sched:sched_wakeup -- CMD against perf record
# -e of the same tracepoints on the same workload (N nanosleeps, so at least
# N switches out of it): stock perf script decodes every perfmark hit with
# the same fields perf's own recording has, the workload's switches count
# the same within 2 %, in file mode, pipe mode and zstd; with -g, dwarf and
# ehframe every hit carries its stack.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_bpffs
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
[ -d /sys/kernel/tracing/events/sched/sched_switch ] || skip "no sched:sched_switch tracepoint here"
N=400
WL=("$PROGS/prog-tpwork" sleep $N)
EV=sched:sched_switch,sched:sched_wakeup
PY=$PERFMARK_SRC/tests/tp_script.py

# the workload's own switches out: "count S-count" of a perf script output
switches() {
	python3 "$PY" hits "$1" sched:sched_switch prog-tpwork >"$1.hits"
	awk '{ n++ } / prev_state=S / { s++ } END { print n + 0, s + 0 }' "$1.hits"
}
# the field names of an event's hits, one set a line, counted
field_sets() {
	python3 "$PY" hits "$1" "$2" | sed 's/^[0-9]* //; s/=[^ ]*//g' | sort | uniq -c
}

perf record -q -e $EV -o "$T/perf.data" -- "${WL[@]}" >/dev/null 2>"$T/perf.err" ||
	die "perf record failed" -- "$T/perf.err"
perf script -i "$T/perf.data" >"$T/perf.txt" 2>/dev/null
read -r pn ps <<<"$(switches "$T/perf.txt")"
echo "perf record: $pn switches out of the workload ($ps sleeping)"
[ "$ps" -ge $N ] || die "perf itself saw $ps sleeping switches of $N sleeps" -- "$T/perf.txt"

check() {   # name, perf script output of a perfmark recording
	local name=$1 txt=$2 n s
	read -r n s <<<"$(switches "$txt")"
	echo "$name: $n switches out of the workload ($s sleeping)"
	[ "$s" -ge $N ] || die "$name: $s switches with prev_state S for $N sleeps" -- "$txt"
	# within 2 % of perf's count of the same switches
	[ $(( (n > pn ? n - pn : pn - n) * 100 )) -le $(( 2 * (n > pn ? n : pn) )) ] ||
		die "$name: $n switches, perf record $pn: more than 2 % apart"
	# every hit decoded with perf's fields, in perf's order
	field_sets "$txt" sched:sched_switch >"$txt.fields"
	[ "$(awk '{ $1 = ""; print }' "$txt.fields")" = "$(field_sets "$T/perf.txt" sched:sched_switch | awk '{ $1 = ""; print }')" ] ||
		die "$name: sched_switch fields differ from perf's" -- "$txt.fields"
	# the workload's own values: its comm, its pid, its priority, as perf has them
	awk -v c=prog-tpwork '{ if ($2 != "prev_comm=" c || $3 != "prev_pid=" $1 || $4 != "prev_prio=120") bad++ }
		END { exit bad > 0 }' "$txt.hits" || die "$name: a switch of the workload with other values" -- "$txt.hits"
	grep -q 'sched:sched_switch: prev_comm=prog-tpwork prev_pid=[0-9]* prev_prio=120 prev_state=S ==> next_comm=' "$txt" ||
		die "$name: perf script does not print perf's text of the fields" -- "$txt"
}

$PERFMARK record -e $EV -o "$T/pm.data" -- "${WL[@]}" >/dev/null 2>"$T/pm.err" ||
	die "perfmark record failed" -- "$T/pm.err"
perf script -i "$T/pm.data" >"$T/pm.txt" 2>"$T/pm.script.err"
check "perfmark record" "$T/pm.txt"
perf evlist -i "$T/pm.data" 2>/dev/null | grep -qx 'sched:sched_wakeup' ||
	die "no sched:sched_wakeup event in the recording" -- "$T/pm.data"
perf evlist -v -i "$T/pm.data" 2>/dev/null | grep '^sched:sched_switch:' | grep -q 'type: 2.*sample_type: .*RAW' ||
	die "sched:sched_switch is not a PERF_TYPE_TRACEPOINT attr with RAW"
ok "file mode: perf script decodes every hit as perf's own recording"

$PERFMARK record -e $EV -o - -- "${WL[@]}" 2>"$T/pipe.err" >"$T/pipe.data" ||
	die "perfmark record -o - failed" -- "$T/pipe.err"
perf script -i - <"$T/pipe.data" >"$T/pipe.txt" 2>/dev/null
check "pipe mode" "$T/pipe.txt"
$PERFMARK record -z -e $EV -o "$T/z.data" -- "${WL[@]}" >/dev/null 2>"$T/z.err" ||
	die "perfmark record -z failed" -- "$T/z.err"
perf script -i "$T/z.data" >"$T/z.txt" 2>/dev/null
check "zstd" "$T/z.txt"
$PERFMARK record -z -e $EV -o - -- "${WL[@]}" 2>"$T/zp.err" | perf script -i - >"$T/zp.txt" 2>/dev/null
check "zstd pipe" "$T/zp.txt"
ok "pipe mode, zstd and zstd in a pipe decode the same"

# stacks on every hit
for cg in fp dwarf ehframe; do
	$PERFMARK record --call-graph $cg -e sched:sched_switch -o "$T/$cg.data" -- "${WL[@]}" >/dev/null 2>"$T/$cg.err" ||
		die "record --call-graph $cg failed" -- "$T/$cg.err"
	perf script -i "$T/$cg.data" >"$T/$cg.txt" 2>/dev/null
	python3 "$PY" chains "$T/$cg.txt" sched:sched_switch >"$T/$cg.chains"
	hits=$(wc -l <"$T/$cg.chains")
	[ "$hits" -ge $N ] || die "--call-graph $cg: $hits hits" -- "$T/$cg.txt"
	# every hit: the kernel's part down to the switch, and a user part
	awk '$1 < 3 || $2 < 1 { bad++ } END { exit bad > 0 }' "$T/$cg.chains" ||
		die "--call-graph $cg: a hit without its kernel and user frames" -- "$T/$cg.chains"
	grep -q '__schedule' "$T/$cg.txt" || die "--call-graph $cg: no __schedule in the kernel stacks" -- "$T/$cg.txt"
	mains=$(grep -c '\bmain\b' "$T/$cg.chains")
	sleeps=$(grep -c 'nanosleep' "$T/$cg.chains")
	echo "--call-graph $cg: $hits hits with stacks, $sleeps in nanosleep, $mains reach main"
	case $cg in
	dwarf)	# perf unwinds the copies: every sleep's stack goes up to main
		[ "$sleeps" -ge $N ] && ! grep nanosleep "$T/$cg.chains" | grep -vq '\bmain\b' ||
			die "--call-graph dwarf: a sleep's user stack short of main" -- "$T/$cg.chains";;
	ehframe) [ "$mains" -ge 1 ] || die "--call-graph ehframe: no user stack reaches main" -- "$T/$cg.chains";;
	esac
done
ok "fp, dwarf and ehframe stacks on every hit"
