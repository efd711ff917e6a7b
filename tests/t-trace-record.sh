#!/usr/bin/env bash
# record -e sched:sched_switch,sched:sched_wakeup -- CMD against perf record
# -e of the same tracepoints on the same workload (N nanosleeps, so at least
# N switches out of it with prev_state S): stock perf script decodes every
# perfmark hit with the same fields perf's own recording has, the
# workload's sleeping switches count the same within 2 % (its preemptions,
# printed, depend on the load), in file mode, pipe mode and zstd; with -g,
# dwarf and ehframe every hit carries its stack.
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
	# within 2 % of perf's count of the same switches: the sleeps' (the
	# preemptions in between depend on the machine's load, not on the recorder)
	[ $(( (s > ps ? s - ps : ps - s) * 100 )) -le $(( 2 * (s > ps ? s : ps) )) ] ||
		die "$name: $s sleeping switches, perf record $ps: more than 2 % apart"
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

# perfmark script: the same text of the fields as perf script, hit by hit
fields_text() { sed -n 's/.*sched:sched_switch: //p' "$1" | sort; }
$PERFMARK script -i "$T/pm.data" >"$T/pms.txt" 2>"$T/pms.err" || die "perfmark script failed" -- "$T/pms.err"
diff <(fields_text "$T/pm.txt") <(fields_text "$T/pms.txt") >"$T/pms.diff" ||
	die "perfmark script's fields differ from perf script's" -- "$T/pms.diff"
# --json: the fields as members, with their types
$PERFMARK script -i "$T/pm.data" --json >"$T/pm.json" 2>"$T/pmj.err" || die "script --json failed" -- "$T/pmj.err"
python3 - "$T/pm.json" "$N" <<'PY' || die "script --json: the fields are not members" -- "$T/pm.json"
import json, sys
n = s = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["event"] != "sched:sched_switch":
        continue
    f = o["fields"]
    assert list(f) == ["prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid",
                       "next_prio"], list(f)
    assert all(isinstance(f[k], int) for k in ("prev_pid", "prev_prio", "prev_state", "next_pid"))
    assert isinstance(f["prev_comm"], str) and isinstance(f["next_comm"], str)
    if f["prev_comm"] == "prog-tpwork":
        assert f["prev_pid"] == o["tid"], (f, o["tid"])
        n += 1
        s += f["prev_state"] == 1
assert s >= int(sys.argv[2]), (n, s)
print("script --json: %d switches of the workload, %d sleeping" % (n, s))
PY
# report --sort comm,FIELD: the workload's sleeping switches counted as one row
$PERFMARK report -i "$T/pm.data" -e sched:sched_switch --sort comm,prev_state >"$T/rep.txt" 2>&1 ||
	die "report --sort comm,prev_state failed" -- "$T/rep.txt"
rows=$(awk '$3 == "prog-tpwork" && $4 == "1" { print $1 }' "$T/rep.txt")
[ "${rows:-0}" -ge $N ] || die "report: ${rows:-no} sleeping switches of prog-tpwork" -- "$T/rep.txt"
$PERFMARK report -i "$T/pm.data" -e sched:sched_switch --sort comm,prev_state --json >"$T/rep.json" 2>&1 ||
	die "report --sort --json failed" -- "$T/rep.json"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d["rows"] if x["comm"] == "prog-tpwork" and x["prev_state"] == 1]
assert d["event"] == "sched:sched_switch" and r and r[0]["hits"] >= int(sys.argv[2]), d' "$T/rep.json" $N ||
	die "report --json: no row of the workload's sleeping switches" -- "$T/rep.json"
$PERFMARK report -i "$T/pm.data" -e sched:sched_switch --sort comm,nosuchfield >"$T/rep.bad" 2>&1 &&
	die "report --sort by an unknown field succeeded"
grep -q "no field 'nosuchfield'" "$T/rep.bad" || die "report --sort: no reason" -- "$T/rep.bad"
ok "perfmark script prints perf's fields, --json as members; report counts by comm and field"

$PERFMARK record -e $EV -o - -- "${WL[@]}" 2>"$T/pipe.err" >"$T/pipe.data" ||
	die "perfmark record -o - failed" -- "$T/pipe.err"
perf script -i - <"$T/pipe.data" >"$T/pipe.txt" 2>/dev/null
check "pipe mode" "$T/pipe.txt"
# perfmark's own reader takes the pipe's tracing data record too
$PERFMARK script -i - <"$T/pipe.data" >"$T/pipes.txt" 2>/dev/null
diff <(fields_text "$T/pipe.txt") <(fields_text "$T/pipes.txt") >/dev/null ||
	die "perfmark script of the pipe: other fields than perf script's" -- "$T/pipes.txt"
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
