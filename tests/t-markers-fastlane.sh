#!/usr/bin/env bash
# The fast lane keeps every guarantee of the trap lane it replaces:
#  - late attach: `record -p` on a process that started untraced records its
#    markers from then on, through the fast lane, with no gap;
#  - a process that writes its last markers and at once _exit()s, or
#    execve()s, loses none of them (the recorder still maps its rings);
#  - two copies of libperfmark in one process (a static link in the
#    executable, a vendored copy in a dlopen()ed plugin) both deliver;
#  - a system-wide session finds a static binary started after it;
#  - bpftrace on perfmark:uevent and a perfmark recording at once: each sees
#    every marker once;
#  - four recorders at once (three system-wide, one of the command): each
#    has every marker of the command (a recorder holds one of three
#    register sites; the fourth finds none free and every marker of that
#    library takes the trap lane instead, which all of them read).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_markers
TYPE0=65836   # TYPE_CHILD in prog-children.c

# records_markers FILE: the system-wide recorder writing FILE records the
# markers of a process started now (its file is read as it grows; a probe
# is there once a flush came after it, which a later poll sees)
records_markers() {
	"$PROGS/prog-children" loop 0.05 >/dev/null 2>&1
	"$PERFMARK" script -i "$1" --json 2>/dev/null | grep -q '"event":"perfmark'
}

# --- late attach -----------------------------------------------------------
# (it goes on 1 s past the recorder's join, however long a loaded machine takes to start it)
bg "$PROGS/prog-children" loop-attached 1 >"$T/late.out"
loop=$BG_PID
# 100 markers before the session: not recorded, and not expected
wait_until 60 file_has "$T/late.out" '^at 100$' || die "prog-children loop did not start" -- "$T/late.out"
pid=$(sed -n 's/^pid //p' "$T/late.out")
"$PERFMARK" record -p "$pid" -o "$T/late.data" >/dev/null 2>"$T/late.err" &
rec=$!
_bg_pids+=("$rec")
wait "$loop"
kill -TERM "$rec"
wait "$rec" || die "record -p exited $?" -- "$T/late.err"
grep -q '^attached at ' "$T/late.out" || die "the fast lane never attached to the running process" -- "$T/late.out"
emitted=$(sed -n 's/^loop emitted \([0-9]*\) .*/\1/p' "$T/late.out")
seqs $((TYPE0 + 9)) "$T/late.data" >"$T/late.seq"
read -r first last n <<<"$(contiguous "$T/late.seq")"
[ "$first" != gap ] || die "late attach: the recorded markers have gaps" -- "$T/late.seq"
[ "$first" -gt 0 ] || die "late attach: markers from before the session were recorded"
[ "$last" -eq $((emitted - 1)) ] || die "late attach: markers $first..$last recorded, the process's last was $((emitted - 1))"
ok "late attach: markers $first..$last (its last) recorded without a gap, through the fast lane"

# --- exit and exec right after the last marker -------------------------------
for how in exit exec; do
	"$PERFMARK" record -o "$T/$how.data" -- "$PROGS/prog-children" $how 20000 \
		>"$T/$how.out" 2>"$T/$how.err" || die "record exited $?" -- "$T/$how.err"
	grep -qx 'fast 8 1' "$T/$how.out" || die "$how: the fast lane was not attached" -- "$T/$how.out"
	seqs $((TYPE0 + 8)) "$T/$how.data" >"$T/$how.seq"
	[ "$(contiguous "$T/$how.seq")" = "0 19999 20000" ] ||
		die "$how: want markers 0..19999, got '$(contiguous "$T/$how.seq")'"
	ok "$how: all 20000 markers written just before $how() recorded"
done

# --- two copies in one process --------------------------------------------------
"$PERFMARK" record -o "$T/two.data" -- "$PROGS/prog-twocopies" "$PROGS/libpm-plugin.so" 5000 \
	>"$T/two.out" 2>"$T/two.err" || die "record exited $?" -- "$T/two.err" "$T/two.out"
grep -qx 'main enabled 1' "$T/two.out" && grep -qx 'plugin enabled 1' "$T/two.out" ||
	die "a copy of libperfmark was never traced" -- "$T/two.out"
for ty in 65936 65937; do
	seqs $ty "$T/two.data" >"$T/two.$ty"
	[ "$(contiguous "$T/two.$ty")" = "0 4999 5000" ] ||
		die "copy with type $ty: '$(contiguous "$T/two.$ty")', want 0 4999 5000"
done
ok "two copies in one process (static executable, vendored plugin): 5000 markers each"

# --- a system-wide session finds a static binary started after it --------------
"$PERFMARK" record -a --duration 30 -o "$T/all.data" >/dev/null 2>"$T/all.err" &
rec=$!
_bg_pids+=("$rec")
wait_until 120 records_markers "$T/all.data" || die "the system-wide session never started" -- "$T/all.err"
"$PROGS/prog-children-static" loop 1.5 >"$T/later.out" || die "prog-children-static failed"
kill -TERM "$rec"
wait "$rec" || die "record -a exited $?" -- "$T/all.err"
pid=$(sed -n 's/^pid //p' "$T/later.out")
grep -q '^attached at ' "$T/later.out" || die "the static binary's fast lane never attached" -- "$T/later.out"
"$PERFMARK" script -i "$T/all.data" --json --type $((TYPE0 + 9)) 2>/dev/null |
	grep "\"pid\":$pid," >"$T/later.json"
awk 'match($0, /"data":"[0-9a-f]*"/) { print substr($0, RSTART + 16, 8) }' "$T/later.json" |
	while read -r h; do echo $((16#${h:6:2}${h:4:2}${h:2:2}${h:0:2})); done >"$T/later.seq"
read -r first last n <<<"$(contiguous "$T/later.seq")"
emitted=$(sed -n 's/^loop emitted \([0-9]*\) .*/\1/p' "$T/later.out")
[ "$first" != gap ] && [ "$last" -eq $((emitted - 1)) ] ||
	die "system-wide: the static binary's markers are not a gapless run to its last one ($first $last $n of $emitted)"
ok "system-wide: a static binary started later recorded from marker $first to its last ($emitted)"

# --- bpftrace and perfmark at once ------------------------------------------------
if command -v bpftrace >/dev/null; then
	lib=$(readlink -f "$PERFMARK_BUILD/libperfmark.so.0")
	# kind 7 markers say when its probe is in place; it counts kind 8 until SIGINT
	bpftrace -e "usdt:$lib:perfmark:uevent /arg0 == $((TYPE0 + 7))/ { printf(\"ready\\n\"); }
		     usdt:$lib:perfmark:uevent /arg0 == $((TYPE0 + 8))/ { @n = count(); }" >"$T/bt.out" 2>&1 &
	bt=$!
	_bg_pids+=("$bt")
	bt_ready() { "$PROGS/prog-children" emit 1 7 >/dev/null 2>&1; grep -q '^ready' "$T/bt.out"; }
	wait_until 60 bt_ready || die "bpftrace's probe never fired" -- "$T/bt.out"
	"$PERFMARK" record -o "$T/both.data" -- "$PROGS/prog-children" exit 3000 >"$T/both.out" 2>"$T/both.err" ||
		die "record exited $?" -- "$T/both.err"
	kill -INT "$bt"
	wait "$bt"
	grep -q '^@n: 3000$' "$T/bt.out" || die "bpftrace did not count 3000 markers" -- "$T/bt.out"
	seqs $((TYPE0 + 8)) "$T/both.data" >"$T/both.seq"
	[ "$(contiguous "$T/both.seq")" = "0 2999 3000" ] ||
		die "perfmark with bpftrace attached: '$(contiguous "$T/both.seq")'"
	ok "bpftrace on perfmark:uevent and perfmark record at once: 3000 markers each, none twice"
fi
# --- four recorders at once -------------------------------------------------------------
bgs=()
for n in 1 2 3; do
	"$PERFMARK" record -a -F 10 --duration 60 -o "$T/bg$n.data" >/dev/null 2>"$T/bg$n.err" &
	bgs+=("$!")
	_bg_pids+=("$!")
	# each one recording before the next
	wait_until 120 records_markers "$T/bg$n.data" || die "system-wide recorder $n never started" -- "$T/bg$n.err"
done
"$PERFMARK" record -o "$T/fg.data" -- "$P" mix 2000 >"$T/fg.out" 2>"$T/fg.err" ||
	die "record exited $?" -- "$T/fg.err"
kill -TERM "${bgs[@]}"
for b in "${bgs[@]}"; do wait "$b" || die "a system-wide recorder exited $?"; done
pid=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' "$T/fg.out")
want=$(sed -n 's/.*(\([0-9]*\) samples, \([0-9]*\) markers.*/\2/p' "$T/fg.err")
[ "$want" -eq 5008 ] || die "the command's own recording has $want markers, want 5008" -- "$T/fg.err"
for f in fg bg1 bg2 bg3; do
	got=$("$PERFMARK" script -i "$T/$f.data" --json 2>/dev/null | grep '"event":"perfmark' | grep -c "\"pid\":$pid,")
	[ "$got" -eq 4008 ] || die "$f: $got markers of the command's main process, want 4008"
done
ok "four recorders at once: each has all 4008 markers of the command's process"
echo "t-markers-fastlane: all checks passed"
