#!/usr/bin/env bash
# Pipe mode (`perfmark record -o -`): stock perf reads the live stream
# (report names the hot function, script shows every marker the demo says it
# emitted), `perf inject` turns it into a file perf reports on, `perfmark
# script -i -` reads the stream and a saved pipe-mode file, a stream cut in
# its header is an error, and a reader that goes away early ends the
# recording with one message, in bounded time, with the command reaped.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
DEMO=$PERFMARK_BUILD/examples/markers-demo
[ -x "$DEMO" ] || skip "no $DEMO"

# markers-demo emits, for R rounds: 6 per round (2 ranges, a batch, a
# counter), a string every 10th round, a start and a done string.
demo_rounds() { sed -n 's/^markers-demo: \([0-9]*\) rounds.*/\1/p' "$1" | tail -n 1; }
demo_expect() { local r=$1; echo $((6 * r + (r + 9) / 10 + 2)) $(((r + 9) / 10 + 2)); }

# ---- perf report -i - names the hot function -----------------------------------
"$PERFMARK" record -o - -- "$PROGS/prog-ratio" 1 2>"$T/r.err" |
	perf report -i - --stdio --no-children --sort sym -g none >"$T/r.rep" 2>"$T/r.perr"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || die "record -o - exited $rc" -- "$T/r.err"
grep -q '(pipe)' "$T/r.err" || die "no summary line naming the pipe" -- "$T/r.err"
awk '/^ *[0-9.]+%/ { p = $1; sub("%", "", p); print p, $NF }' "$T/r.rep" >"$T/r.self"
top=$(sort -rn "$T/r.self" | head -n 1 | awk '{ print $2 }')
[ "$top" = work_a ] || die "perf report -i - top symbol is '$top', want work_a" -- "$T/r.rep" "$T/r.perr"
a=$(pct_of "$T/r.self" work_a); b=$(pct_of "$T/r.self" work_b)
fcmp "$b > 0 && $a / $b >= 2.25 && $a / $b <= 3.75" || die "work_a:work_b = $a:$b over the pipe" -- "$T/r.rep"
ok "perf report -i -: work_a $a%, work_b $b%"

# ---- perf script -i - shows every marker --------------------------------------
"$PERFMARK" record -o - -- "$DEMO" 0.5 2>"$T/d.err" | perf script -i - >"$T/d.script" 2>"$T/d.perr"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || die "record -o - of markers-demo exited $rc" -- "$T/d.err"
rounds=$(demo_rounds "$T/d.err")
[ -n "$rounds" ] || die "markers-demo's output (on stderr in pipe mode) has no round count" -- "$T/d.err"
read -r want_all want_str <<<"$(demo_expect "$rounds")"
got_all=$(grep -Ec ' perfmark:(printf|uevent):' "$T/d.script")
got_str=$(grep -c 'BPF string: "' "$T/d.script")
[ "$got_all" -eq "$want_all" ] && [ "$got_str" -eq "$want_str" ] ||
	die "perf script -i -: $got_all markers ($got_str strings), the demo emitted $want_all ($want_str) in $rounds rounds" -- "$T/d.script" "$T/d.perr"
grep -q "markers: *$want_all\|$want_all markers" "$T/d.err" || die "summary does not count $want_all markers" -- "$T/d.err"
grep -q 'BPF string: "markers-demo done: '"$rounds"' rounds' "$T/d.script" || die "no done string" -- "$T/d.script"
ok "perf script -i -: $got_all markers ($got_str strings) for $rounds rounds, as emitted"

# the same program recorded to a file: the same accounting
"$PERFMARK" record -o "$T/f.data" -- "$DEMO" 0.5 >"$T/f.out" 2>"$T/f.err" || die "file-mode record failed" -- "$T/f.err"
frounds=$(demo_rounds "$T/f.out")
read -r fwant _ <<<"$(demo_expect "$frounds")"
fgot=$(perf script -i "$T/f.data" 2>/dev/null | grep -Ec ' perfmark:(printf|uevent):')
[ "$fgot" -eq "$fwant" ] || die "file mode: $fgot markers, want $fwant for $frounds rounds"
ok "file mode: $fgot markers for $frounds rounds (pipe: $got_all for $rounds)"

# ---- perfmark script reads the live stream and a pipe-mode file ----------------
"$PERFMARK" record -o - -- "$DEMO" 0.5 2>"$T/s.err" | tee "$T/p.data" |
	"$PERFMARK" script -i - >"$T/s.txt" 2>"$T/s.serr"
st=("${PIPESTATUS[@]}")
[ "${st[0]}" -eq 0 ] && [ "${st[2]}" -eq 0 ] || die "record | script -i - exited ${st[*]}" -- "$T/s.err" "$T/s.serr"
[ ! -s "$T/s.serr" ] || die "perfmark script -i - wrote to stderr" -- "$T/s.serr"
srounds=$(demo_rounds "$T/s.err")
read -r swant _ <<<"$(demo_expect "$srounds")"
sgot=$(grep -Ec 'perfmark:(printf|uevent)' "$T/s.txt")
[ "$sgot" -eq "$swant" ] || die "perfmark script -i -: $sgot markers, want $swant" -- "$T/s.txt"
grep -q 'perfmark:printf: "markers-demo done' "$T/s.txt" || die "no done string decoded" -- "$T/s.txt"
grep -Eq ' (cpu-clock|cycles):' "$T/s.txt" || die "no samples from the stream" -- "$T/s.txt"
ok "perfmark script -i - (stream): $sgot markers"

"$PERFMARK" script -i "$T/p.data" >"$T/p.txt" 2>"$T/p.serr" || die "perfmark script of a pipe-mode file failed" -- "$T/p.serr"
cmp -s "$T/s.txt" "$T/p.txt" || die "script of the saved stream differs from script of the live stream"
pgot=$(perf script -i "$T/p.data" 2>/dev/null | grep -Ec ' perfmark:(printf|uevent):')
[ "$pgot" -eq "$swant" ] || die "perf script of the pipe-mode file: $pgot markers, want $swant"
ok "pipe-mode file: perfmark script identical, perf script $pgot markers"

# ---- perf inject -i - -o FILE --------------------------------------------------
"$PERFMARK" record -g -o - -- "$PROGS/prog-ratio" 1 2>"$T/i.err" |
	perf inject -i - -o "$T/inj.data" 2>"$T/i.perr"
[ -s "$T/inj.data" ] || die "perf inject wrote nothing" -- "$T/i.err" "$T/i.perr"
report_self "$T/inj.data" >"$T/i.self"
top=$(sort -rn "$T/i.self" | head -n 1 | awk '{ print $2 }')
[ "$top" = work_a ] || die "perf report of the injected file: top is '$top'" -- "$T/i.self"
perf report -i "$T/inj.data" --stdio --no-children -g caller --sort sym 2>/dev/null >"$T/i.caller"
grep -A4 '\] work_a$' "$T/i.caller" | grep -qw main || die "injected file: work_a's chain lacks main" -- "$T/i.caller"
ok "perf inject -i - -o FILE: report names work_a $(pct_of "$T/i.self" work_a)%, chains reach main"

# ---- a stream cut inside its header ------------------------------------------------
for n in 16 200; do
	head -c "$n" "$T/p.data" | "$PERFMARK" script -i - >/dev/null 2>"$T/h.err"
	rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/h.err")" -eq 1 ] && grep -q '^perfmark: .*truncated' "$T/h.err" ||
		die "stream cut at $n bytes: rc $rc, want 1 and one 'truncated' line" -- "$T/h.err"
done
ok "stream cut in its header: $(cat "$T/h.err")"

# ---- the reader goes away early ------------------------------------------------------
# A distinctive duration names our prog-spin among other tests' processes.
# It spins for 600 s of CPU: a recorder that did not notice the closed pipe
# would wait for it and meet the timeout; one that does ends long before.
for n in 1000 20000 200000; do
	for z in "" -z; do
		spin="$PROGS/prog-spin 600.$n"
		start=$(date +%s%N)
		timeout -k 2 300 "$PERFMARK" record $z -F 20000 -o - -- $spin 2>"$T/b.err" | head -c "$n" >/dev/null
		rc=${PIPESTATUS[0]}
		took=$((($(date +%s%N) - start) / 1000000))
		label="head -c $n${z:+ ($z)}"
		[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || die "[$label] recorder hung (timeout)" -- "$T/b.err"
		[ "$rc" -lt 128 ] || die "[$label] recorder died of signal $((rc - 128))" -- "$T/b.err"
		! grep -Eqi 'segmentation|abort|core dumped|sanitizer|libbpf' "$T/b.err" ||
			die "[$label] crash or noise on stderr" -- "$T/b.err"
		[ "$rc" -eq 1 ] || die "[$label] exit status $rc, want 1" -- "$T/b.err"
		grep -v 'falling back to cpu-clock' "$T/b.err" >"$T/b.msg"
		[ "$(wc -l <"$T/b.msg")" -eq 1 ] && grep -qi '^perfmark: .*\(broken pipe\|closed\)' "$T/b.msg" ||
			die "[$label] want one 'perfmark: ... broken pipe' line" -- "$T/b.err"
		pgrep -f "^$spin\$" >/dev/null && die "[$label] the command is still running (or unreaped) after the recorder exited"
		ok "[$label] exit 1 after ${took} ms: $(cat "$T/b.msg")"
	done
done
echo "t-pipe: all checks passed"
