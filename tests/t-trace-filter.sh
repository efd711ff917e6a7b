#!/usr/bin/env bash
# record -e TRACEPOINT --filter EXPR keeps exactly the hits that match: a
# workload that sends itself A SIGUSR1 and B SIGUSR2 (signal:signal_generate
# A + B times, deterministic), recorded unfiltered once, then under each
# filter; the filtered hits are those of the unfiltered run that match, and
# only those.  An expression the filter cannot evaluate is one error at the
# start, and the file named by -o is not touched.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_bpffs
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
[ -d /sys/kernel/tracing/events/signal/signal_generate ] || skip "no signal:signal_generate tracepoint here"
A=37 B=23
WL=("$PROGS/prog-tpwork" signals $A $B)
EV=signal:signal_generate
PY=$PERFMARK_SRC/tests/tp_script.py

hits() {   # FILE: the workload's signal_generate hits, "sig=.. comm=.. pid=.." a line
	perf script -i "$1" 2>/dev/null >"$1.txt"
	python3 "$PY" hits "$1.txt" $EV prog-tpwork | sed 's/^[0-9]* //' >"$1.hits"
}

$PERFMARK record -e $EV -o "$T/all.data" -- "${WL[@]}" >/dev/null 2>"$T/all.err" ||
	die "unfiltered record failed" -- "$T/all.err"
hits "$T/all.data"
n10=$(grep -c '^sig=10 ' "$T/all.data.hits") n12=$(grep -c '^sig=12 ' "$T/all.data.hits")
echo "unfiltered: $n10 SIGUSR1, $n12 SIGUSR2, $(wc -l <"$T/all.data.hits") hits"
[ "$n10" -eq $A ] && [ "$n12" -eq $B ] || die "unfiltered: $n10 SIGUSR1 and $n12 SIGUSR2 for $A and $B sent" -- "$T/all.data.hits"

# each filter ;; the same predicate in Python over the unfiltered hits' fields
i=0
while IFS= read -r line; do
	[ -n "$line" ] || continue
	expr=${line%% ;; *} pred=${line#* ;; }
	i=$((i + 1))
	f=$T/f$i.data
	$PERFMARK record -e $EV --filter "$expr" -o "$f" -- "${WL[@]}" >/dev/null 2>"$f.err" ||
		die "record --filter '$expr' failed" -- "$f.err"
	hits "$f"
	python3 - "$T/all.data.hits" "$pred" >"$f.want" <<'PY'
import sys
for line in open(sys.argv[1]):
    fl = dict(kv.split('=', 1) for kv in line.split())
    sig, comm, pid, code = int(fl['sig']), fl['comm'], int(fl['pid']), int(fl['code'])
    if eval(sys.argv[2]):
        print(line, end='')
PY
	got=$(wc -l <"$f.hits") want=$(wc -l <"$f.want")
	echo "--filter '$expr': $got hits, $want in the unfiltered run match"
	[ "$got" -eq "$want" ] || die "--filter '$expr': $got hits, $want expected" -- "$f.hits" "$f.want"
	# the hits kept are the ones that match: the same lines but for the pids
	diff <(sed 's/ pid=[0-9]*//' "$f.hits" | sort) <(sed 's/ pid=[0-9]*//' "$f.want" | sort) >/dev/null ||
		die "--filter '$expr': other hits than the matching ones" -- "$f.hits" "$f.want"
done <<'EOF2'
sig == 10 ;; sig == 10
sig == 12 || sig == 10 ;; sig in (10, 12)
sig != 10 && comm == "prog-tpwork" ;; sig != 10 and comm == 'prog-tpwork'
comm ~ "prog-tp*" && (sig < 11 || sig >= 12) ;; comm.startswith('prog-tp') and (sig < 11 or sig >= 12)
!(sig == 10) && pid > 0 ;; not sig == 10 and pid > 0
sig & 2 ;; sig & 2 != 0
comm ~ "*tpwork" ;; comm.endswith('tpwork')
comm ~ "*g-tpw*" && sig <= 10 ;; 'g-tpw' in comm and sig <= 10
comm == prog-tpwork && code == 0 ;; comm == 'prog-tpwork' and code == 0
comm != 'prog-tpwork' || sig > 11 ;; comm != 'prog-tpwork' or sig > 11
comm ~ "zz*" ;; comm.startswith('zz')
sig == 10 || sig == 12 && comm ~ "nomatch*" ;; sig == 10 or (sig == 12 and comm.startswith('nomatch'))
common_pid > 0 && sig >= 0x0c ;; sig >= 12
EOF2
ok "$i filters keep exactly the matching hits"

# what the filter cannot evaluate: one line at the start, exit 1, -o untouched
echo "an earlier recording" >"$T/keep.data"
deep=$(printf '(%.0s' $(seq 20))sig==1$(printf ')%.0s' $(seq 20))
long="comm == \"$(printf 'x%.0s' $(seq 65))\""
huge=$(python3 -c "print(' || '.join(['sig == 1'] * 40))")
while IFS= read -r expr; do
	[ -n "$expr" ] || continue
	$PERFMARK record -e $EV --filter "$expr" -o "$T/keep.data" -- "${WL[@]}" >"$T/bad.out" 2>"$T/bad.err"
	rc=$?
	[ $rc -eq 1 ] || die "--filter '$expr': exit $rc, not 1" -- "$T/bad.err"
	[ "$(wc -l <"$T/bad.err")" -eq 1 ] && grep -q '^perfmark: ' "$T/bad.err" ||
		die "--filter '$expr': not one error line" -- "$T/bad.err"
	! grep -q '^signals' "$T/bad.out" || die "--filter '$expr': the workload ran"
	[ "$(cat "$T/keep.data")" = "an earlier recording" ] || die "--filter '$expr': -o was written"
	echo "refused '$expr': $(cat "$T/bad.err")"
done <<EOF2
nosuchfield == 1
sig = 1
sig == 
(sig == 1
sig == 1)
sig == 1 &&
sig == 1 foo
comm < "a"
comm ~ "a?b"
comm ~ "pro*work"
sig == "ten"
sig ~ "1*"
sig == 99999999999
sig == 0x
comm == "unterminated
$deep
$long
$huge
EOF2
$PERFMARK record -e cpu-clock --filter 'sig == 1' -o "$T/keep.data" -- true 2>"$T/bad.err" &&
	die "--filter on cpu-clock accepted"
grep -q 'tracepoints' "$T/bad.err" || die "--filter on cpu-clock: no reason" -- "$T/bad.err"
$PERFMARK record --filter 'sig == 1' -o "$T/keep.data" -- true 2>"$T/bad.err" && die "--filter without -e accepted"
[ "$(cat "$T/keep.data")" = "an earlier recording" ] || die "-o was written"
ok "filters it cannot evaluate fail at the start"
