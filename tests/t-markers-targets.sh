#!/usr/bin/env bash
# Which processes' markers are recorded:
#  -a       a process started before the recording and one started during it
#           are both covered (system-wide uprobe by library path);
#  -- CMD   CMD's markers are all there, a process outside is not;
#  -p PID   PID's markers are there, another process's are not.
# prog-markers loop SEC TAG emits "loop tag=TAG n=K" every 5 ms.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_markers

tag=$$   # unique per run: other tests may run prog-markers at the same time

# tags TAG FILE: how many markers of loop TAG the file holds (perfmark script)
# and, in perf script, how many BPF strings of it.
count_pm() { "$PERFMARK" script -i "$2" --json 2>/dev/null | grep -ac "\"text\":\"loop tag=$1 n="; }
count_perf() { perf script -i "$2" 2>/dev/null | grep -ac "BPF string: \"loop tag=$1 n="; }
emitted() { sed -n "s/^loop $1 emitted \([0-9]*\) .*/\1/p" "$T/$1.out"; }

# in_file TAG FILE N: the recording being written holds N markers of loop
# TAG (its header's data size is kept current: it is read as it grows)
in_file() { [ "$(count_pm "$1" "$2")" -ge "$3" ]; }
# recording FILE: the recorder writing FILE records the markers of a process
# started now (what follows starts after its uprobes are in place); a probe
# is in the file once a flush has come after it, a later poll sees it
recording() {
	"$P" loop 0.02 "probe$tag" >/dev/null
	in_file "probe$tag" "$1" 1
}

# --- -a: before and after ----------------------------------------------------
bg "$P" loop 600 "before$tag" >"$T/before$tag.out"
before=$BG_PID
# it has emitted before the recording starts
wait_until 60 file_has "$T/before$tag.out" '^at 20$' || die "loop before did not start"
F=$T/all.data
bg "$PERFMARK" record -a -F 100 -o "$F" 2>"$T/rec-a.err" >/dev/null
rec=$BG_PID
wait_until 120 recording "$F" || die "record -a never recorded a marker" -- "$T/rec-a.err"
"$P" loop 1 "after$tag" >"$T/after$tag.out"
wait_until 120 in_file "before$tag" "$F" 51 || die "record -a has no 51 markers of the process before"
kill -TERM "$rec"   # (a background job ignores SIGINT: TERM)
wait "$rec"; rc=$?
[ "$rc" -eq 0 ] || die "record -a exited $rc" -- "$T/rec-a.err"
bg_kill "$before"
nb=$(count_pm "before$tag" "$F"); na=$(count_pm "after$tag" "$F")
[ "$nb" -gt 50 ] || die "-a: only $nb markers from the process started before the recording" -- "$T/rec-a.err"
ea=$(emitted "after$tag")
[ "$na" -eq "$ea" ] ||
	die "-a: $na of the $ea markers of the process started during the recording" -- "$T/rec-a.err" "$T/after$tag.out"
pb=$(count_perf "before$tag" "$F"); pa=$(count_perf "after$tag" "$F")
[ "$pb" -eq "$nb" ] && [ "$pa" -eq "$na" ] ||
	die "-a: perf script sees $pb/$pa markers, perfmark script $nb/$na"
# the one started before had emitted for a while already: its first recorded n > 0
first=$("$PERFMARK" script -i "$F" --json 2>/dev/null | grep -a "loop tag=before$tag n=" | head -n 1 | sed 's/.* n=\([0-9]*\)".*/\1/')
[ "${first:-0}" -gt 0 ] ||
	die "-a: the first recorded marker of the process started before is n=${first:-none}, want > 0 (it had emitted already)"
ok "-a: $nb markers from the process started before (first n=$first), all $na from the one started during"

# --- -- CMD: an outside process is not covered ------------------------------------
bg "$P" loop 600 "outside$tag" >"$T/outside$tag.out"
out=$BG_PID
wait_lines "$T/outside$tag.out" 1 || die "loop outside did not start"
F=$T/cmd.data
"$PERFMARK" record -F 100 -o "$F" -- "$P" loop 1 "inside$tag" >"$T/inside$tag.out" 2>"$T/rec-cmd.err"
rc=$?
[ "$rc" -eq 0 ] || die "record -- CMD exited $rc" -- "$T/rec-cmd.err"
ni=$(count_pm "inside$tag" "$F"); no=$(count_pm "outside$tag" "$F")
ei=$(emitted "inside$tag")
[ "$ni" -eq "$ei" ] || die "-- CMD: $ni of CMD's $ei markers recorded" -- "$T/rec-cmd.err"
[ "$no" -eq 0 ] || die "-- CMD: $no markers of a process outside the target were recorded"
[ "$(count_perf "outside$tag" "$F")" -eq 0 ] && [ "$(count_perf "inside$tag" "$F")" -eq "$ni" ] ||
	die "-- CMD: perf script disagrees with perfmark script"
ok "-- CMD: all $ni markers of CMD, none of the process outside"
bg_kill "$out"

# --- -p PID ------------------------------------------------------------------------
bg "$P" loop 600 "ptarget$tag" >"$T/ptarget$tag.out"
pt=$BG_PID
bg "$P" loop 600 "pother$tag" >"$T/pother$tag.out"
po=$BG_PID
wait_lines "$T/ptarget$tag.out" 1 && wait_lines "$T/pother$tag.out" 1 || die "loops did not start"
F=$T/pid.data
bg "$PERFMARK" record -F 100 -p "$pt" -o "$F" >/dev/null 2>"$T/rec-p.err"
rec=$BG_PID
wait_until 120 in_file "ptarget$tag" "$F" 101 || die "-p: no 101 markers of the target recorded" -- "$T/rec-p.err"
kill -TERM "$rec"   # (a background job ignores SIGINT: TERM)
wait "$rec"; rc=$?
[ "$rc" -eq 0 ] || die "record -p exited $rc" -- "$T/rec-p.err"
nt=$(count_pm "ptarget$tag" "$F"); nother=$(count_pm "pother$tag" "$F")
[ "$nother" -eq 0 ] || die "-p: $nother markers of another process were recorded"
[ "$(count_perf "pother$tag" "$F")" -eq 0 ] && [ "$(count_perf "ptarget$tag" "$F")" -eq "$nt" ] ||
	die "-p: perf script disagrees with perfmark script"
ok "-p: $nt markers of the target, none of the other process"
bg_kill "$pt" "$po"
echo "t-markers-targets: all checks passed"
