#!/usr/bin/env bash
# perfmark record through perfmarkd: with a daemon on the socket, record runs
# as an anonymous session of the daemon writing into the file the client
# opened (or its stdout pipe); the output is what in-process recording makes.
# Checked: the daemon did the work (its log, -v), ratio and call chains in
# perf report, markers, -o - into perf script -i -, CMD's exit status, the
# notice once, a client killed mid-recording (file readable, daemon serving,
# nothing left over), errors, PERFMARK_NO_DAEMON and no daemon at all.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_daemon
need_perfmark
daemon_start

TYPE0=65836   # TYPE_CHILD in prog-children.c
log_lines() { grep -c "$1" "$T/pmd.log"; }

# --- -g -- prog-ratio, via the daemon -----------------------------------------
F=$T/ratio.data
before=$(log_lines 'anonymous')
pm record -v -g -o "$F" -- "$PROGS/prog-ratio" 2 >"$T/rec.out" 2>"$T/rec.err"
rc=$?
[ "$rc" -eq 0 ] || die "record exited $rc" -- "$T/rec.err" "$T/pmd.log"
grep -q '^\[ perfmark record: Wrote .* via perfmarkd \]$' "$T/rec.err" ||
	die "-v summary does not say 'via perfmarkd'" -- "$T/rec.err"
[ "$(log_lines 'anonymous')" -gt "$before" ] || die "the daemon log shows no anonymous session" -- "$T/pmd.log"
grep -q "records pid .* (anonymous session)" "$T/pmd.log" || die "daemon did not record the pid" -- "$T/pmd.log"
n=$(grep -c 'falling back to cpu-clock' "$T/rec.err")
if have_hw_cycles; then
	[ "$n" -eq 0 ] || die "fallback notice with a PMU" -- "$T/rec.err"
else
	[ "$n" -eq 1 ] || die "fallback notice printed $n times (want once)" -- "$T/rec.err"
fi
report_self "$F" >"$T/self"
a=$(pct_of "$T/self" work_a)
b=$(pct_of "$T/self" work_b)
fcmp "$a > 0 && $b > 0" || die "work_a ($a%) / work_b ($b%) missing from perf report" -- "$T/self"
fcmp "$a / $b >= 2.25 && $a / $b <= 3.75" || die "work_a:work_b = $a:$b, want 3:1 +-25%" -- "$T/self"
perf report -i "$F" --stdio 2>/dev/null | grep -q 'work_a' || die "perf report --stdio does not name work_a"
perf report -i "$F" --stdio 2>/dev/null | grep -q 'work_b' || die "perf report --stdio does not name work_b"
perf script -i "$F" -F ip,sym 2>/dev/null | grep -q 'main' || die "no call chains up to main"
perf report -i "$F" --header-only 2>/dev/null | grep -q 'cmdline : .*record -v -g -o' ||
	die "the header's cmdline is not the record command line"
ok "via perfmarkd: work_a $a% work_b $b% (ratio $(awk "BEGIN{printf \"%.2f\", $a/$b}"))"

# the summary line without -v is the in-process one, word for word
pm record -o "$T/q.data" -- true 2>"$T/q.err" || die "record -- true failed" -- "$T/q.err"
grep -q '^\[ perfmark record: Wrote [0-9.]* MB .*/q.data ([0-9]* samples, [0-9]* markers, [0-9]* lost samples, [0-9]* lost markers) \]$' "$T/q.err" ||
	die "summary line differs from in-process" -- "$T/q.err"
pm session list >"$T/list" || die "session list failed"
[ "$(wc -l <"$T/list")" -eq 1 ] || die "anonymous sessions appear in session list" -- "$T/list"
ok "summary line unchanged without -v; session list shows no anonymous session"

# --- markers ---------------------------------------------------------------------
M=$T/markers.data
pm record -o "$M" -- "$DEMO" >/dev/null 2>"$T/m.err" || die "record -- markers-demo failed" -- "$T/m.err"
n=$(markers_in "$M")
[ "$n" -ge 3 ] || die "only $n string markers via the daemon" -- "$T/m.err"
perf script -i "$M" 2>/dev/null | grep -q 'BPF string' || die "perf script shows no BPF string"
ok "$n string markers recorded by the daemon"

# a static libperfmark in CMD itself: every marker from its very first one,
# as in-process (the client passes CMD's executable; before, the daemon found
# it only at the exec's mapping and the first markers went unrecorded)
S=$T/static.data
pm record -o "$S" -- "$PROGS/prog-children-static" loop 0.3 >"$T/s.out" 2>"$T/s.err" ||
	die "record -- prog-children-static failed" -- "$T/s.err"
seqs $((TYPE0 + 9)) "$S" >"$T/s.seq"
read -r first last n <<<"$(contiguous "$T/s.seq")"
emitted=$(sed -n 's/^loop emitted \([0-9]*\) .*/\1/p' "$T/s.out")
[ "$first" = 0 ] && [ "$last" -eq $((emitted - 1)) ] ||
	die "static CMD via the daemon: markers $first..$last ($n) of 0..$((emitted - 1))" -- "$T/s.out" "$T/s.seq"
ok "static CMD via the daemon: all $emitted markers, from the first"

# --- -o - into perf script -i - ----------------------------------------------------
before=$(log_lines 'records pid')
pm record -o - -- "$DEMO" 2>"$T/p.err" | perf script -i - 2>/dev/null >"$T/p.txt"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || die "record -o - exited $rc" -- "$T/p.err"
[ "$(log_lines 'records pid')" -gt "$before" ] || die "-o - did not go through the daemon" -- "$T/pmd.log"
grep -q 'BPF string' "$T/p.txt" || die "pipe stream lacks markers" -- "$T/p.txt" "$T/p.err"
grep -q 'Wrote .* (pipe)' "$T/p.err" || die "no pipe summary" -- "$T/p.err"
ok "-o - via the daemon: $(grep -c 'BPF string' "$T/p.txt") markers in perf script -i -"

# --- exit status -------------------------------------------------------------------
pm record -o "$T/e.data" -- sh -c 'exit 3' 2>"$T/e.err"
rc=$?
[ "$rc" -eq 3 ] || die "record -- sh -c 'exit 3' exited $rc" -- "$T/e.err"
perf report -i "$T/e.data" --header-only >/dev/null 2>&1 || die "e.data unreadable"
ok "CMD's exit status 3 passed on"

# --- errors ------------------------------------------------------------------------
pm record -e bogus -o "$T/bad.data" -- true 2>"$T/bad.err"
[ $? -eq 1 ] && [ "$(wc -l <"$T/bad.err")" -eq 1 ] && grep -q "^perfmark: unknown event 'bogus'" "$T/bad.err" ||
	die "unknown event: not one perfmark: line and exit 1" -- "$T/bad.err"
[ -e "$T/bad.data" ] && die "a failed record left its output"
pm record -o "$T/bad.data" -- /nonexistent/cmd 2>"$T/bad.err"
[ $? -eq 1 ] && grep -q '^perfmark: ' "$T/bad.err" || die "missing command: no error" -- "$T/bad.err"
[ -e "$T/bad.data" ] && die "a failed record left its output"
ok "errors: one perfmark: line, exit 1, no output left"

# --- the client killed mid-recording -----------------------------------------------
K=$T/killed.data
"$PERFMARK" record -o "$K" -- "$PROGS/prog-spin" 600 >/dev/null 2>"$T/k.err" &
kp=$!
wait_until 60 log_has "uid 0 \(pid $kp\) records" || die "the daemon does not record for $kp" -- "$T/pmd.log"
# killed once its file holds samples (the header is kept current as it grows)
spun() { perf script -i "$K" 2>/dev/null | grep -q spin_loop; }
wait_until 120 spun || die "no spin_loop samples in the recording" -- "$T/k.err"
kill -9 "$kp"
wait "$kp" 2>/dev/null
wait_until 60 log_has "recording of uid 0 \(pid $kp\) ended: the client went away" ||
	die "daemon did not end the anonymous session of the killed client" -- "$T/pmd.log"
perf report -i "$K" --stdio 2>"$T/k.rep.err" | grep -q 'spin_loop' ||
	die "the killed recording is not readable" -- "$T/k.rep.err"
kill -0 "$PMD_PID" || die "daemon died"
pm session list >"$T/list" || die "session list failed after the kill"
[ "$(wc -l <"$T/list")" -eq 1 ] || die "leftover session after the kill" -- "$T/list"
ls "$PMD_PINS" 2>/dev/null | grep -q . && die "pins left by an anonymous session"
ls "$PMD_STATE/sessions" 2>/dev/null | grep -q . && die "an anonymous session was stored"
# the command goes on unrecorded, as with in-process recording: end it by its pid
spin=$(sed -n "s/.*uid 0 (pid $kp) records pid \([0-9]*\) .*/\1/p" "$T/pmd.log")
[ -n "$spin" ] && kill -9 "$spin" 2>/dev/null
pm record -o "$T/after.data" -- true 2>/dev/null || die "record after the kill failed"
ok "killed client: file readable, daemon serving, nothing left over"

# --- in-process: forced, and with no daemon ---------------------------------------
before=$(log_lines 'records pid')
PERFMARK_NO_DAEMON=1 pm record -v -o "$T/nd.data" -- true 2>"$T/nd.err" || die "PERFMARK_NO_DAEMON=1 record failed" -- "$T/nd.err"
grep -q 'via perfmarkd' "$T/nd.err" && die "PERFMARK_NO_DAEMON=1 went via the daemon"
[ "$(log_lines 'records pid')" -eq "$before" ] || die "PERFMARK_NO_DAEMON=1 reached the daemon"
kill "$PMD_PID"; wait "$PMD_PID" 2>/dev/null; PMD_PID=
pm record -v -g -o "$T/in.data" -- "$PROGS/prog-ratio" 1 2>"$T/in.err"
rc=$?
[ "$rc" -eq 0 ] || die "record with no daemon exited $rc" -- "$T/in.err"
grep -q 'via perfmarkd' "$T/in.err" && die "summary says via perfmarkd with no daemon"
[ "$(grep -c '^perfmark: ' "$T/in.err")" -le 1 ] || die "noise with no daemon" -- "$T/in.err"
perf report -i "$T/in.data" --stdio 2>/dev/null | grep -q work_a || die "no work_a in-process"
ok "PERFMARK_NO_DAEMON=1 and no daemon: in-process"
