#!/usr/bin/env bash
# A recording becomes a named session while it runs, and a session goes back
# to a client (issue 20, seed 003's DETACH/ATTACH).
#   keep: a 10 000-marker workload recorded through perfmarkd is split by
#     `session keep NAME --from PID` while its markers flow (and again by
#     SIGUSR2 to the record process): the file ends there and stock perf reads
#     it; the file plus the session's snapshot hold every marker once.
#   take: `session take NAME -o FILE` streams the session (ring, then live)
#     and deletes it when the taker ends, by SIGTERM or by kill -9.
#   who: only the recording's owner or root keeps it, only the session's
#     owner or root takes it (real users, as t-daemon-security).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/markers-lib.sh"
. "$(dirname "$0")/users-lib.sh"
need_daemon
need_perfmark
test_users pm20
extra_members 1
MEMBER2_UID=${EXTRA_UIDS[0]}
daemon_start_shared

N=10000
KIND=$((65836 + 10))    # TYPE_CHILD + 10 in prog-children.c: split's markers
W=$T/work
mkdir -m 0777 "$W"

# wait_for COND-COMMAND... [what]: poll up to 60 s (a loaded machine)
wait_for() { wait_until 60 "$@"; }
has_line() { grep -q "$2" "$1" 2>/dev/null; }
# session NAME listed (as root)
listed() { pm session list 2>/dev/null | awk 'NR > 1 { print $1 }' | grep -qx "$1"; }
# pid P gone (not our child: wait cannot tell)
gone() { ! kill -0 "$1" 2>/dev/null; }

# check_split FILE SNAP WHAT: the split's markers once each, in FILE and SNAP together
check_split() {
	seqs "$KIND" "$1" >"$T/f.seq"
	seqs "$KIND" "$2" >"$T/s.seq"
	local nf ns dup all
	nf=$(wc -l <"$T/f.seq") ns=$(wc -l <"$T/s.seq")
	dup=$(sort -n "$T/f.seq" "$T/s.seq" | uniq -d | wc -l)
	all=$(sort -n "$T/f.seq" "$T/s.seq" | uniq | awk -v n="$N" '$1 == NR - 1 { k++ } END { print k + 0 }')
	[ "$dup" -eq 0 ] || die "$3: $dup markers both in the file and in the session" -- "$T/pmd.log"
	[ "$all" -eq "$N" ] && [ $((nf + ns)) -eq "$N" ] ||
		die "$3: the file holds $nf, the session $ns markers; $all of 0..$((N - 1)) (want all $N once)" -- "$T/pmd.log"
	# split while markers flowed: at least 30 % on either side (prog-children split)
	[ "$nf" -ge $((N * 3 / 10)) ] && [ "$ns" -ge $((N * 3 / 10)) ] ||
		die "$3: not split mid-run: file $nf, session $ns"
	# stock perf reads the file: every marker of it, and its header
	local pf
	pf=$(perf script -i "$1" 2>/dev/null | grep -c "perfmark:uevent:")
	[ "$pf" -eq "$nf" ] || die "$3: perf script prints $pf markers of the file's $nf"
	perf report -i "$1" --header-only 2>/dev/null | grep -q 'cmdline : .*record' ||
		die "$3: the file's header has no cmdline: not finished"
	SPLIT="file $nf + session $ns"
}

# --- keep --from: the file ends, the session goes on -----------------------------
F=$T/keep.data
"$PERFMARK" record -o "$F" -- "$PROGS/prog-children" split "$N" "$T/go1" >"$T/k.out" 2>"$T/k.err" &
kp=$!
_bg_pids+=("$kp")
wait_for has_line "$T/k.out" '^at ' || die "the workload did not start" -- "$T/k.err" "$T/pmd.log"
pm session keep kept1 --from "$kp" >"$T/keep.out" 2>"$T/keep.err" || die "session keep failed" -- "$T/keep.err" "$T/pmd.log"
grep -q "^session kept1: kept from the recording of process $kp" "$T/keep.out" || die "keep says" -- "$T/keep.out"
touch "$T/go1"
wait "$kp"
rc=$?
[ "$rc" -eq 0 ] || die "record exited $rc after keep" -- "$T/k.err"
grep -q "split emitted $N" "$T/k.out" || die "the workload did not finish" -- "$T/k.out"
grep -q "^perfmark: the recording goes on as session 'kept1' in perfmarkd" "$T/k.err" || die "record does not say it was kept" -- "$T/k.err"
grep -q "^\[ perfmark record: Wrote " "$T/k.err" || die "no summary for the file" -- "$T/k.err"
grep -q "recording of uid 0 (pid $kp) kept as session 'kept1' by uid 0" "$T/pmd.log" || die "daemon log" -- "$T/pmd.log"
listed kept1 || die "kept1 not listed"
pm session show kept1 --json >"$T/kept1.json" || die "show kept1"
grep -q '"state":"running"' "$T/kept1.json" || die "kept1 not running" -- "$T/kept1.json"
pm session snapshot kept1 -o "$T/kept1.data" || die "snapshot kept1"
check_split "$F" "$T/kept1.data" "keep --from"
# the record's summary counts what the file holds (not what went on)
w=$(sed -n 's/.* (\([0-9]*\) samples, \([0-9]*\) markers,.*/\2/p' "$T/k.err")
[ "$w" -eq "$(wc -l <"$T/f.seq")" ] || die "the summary says $w markers, the file holds $(wc -l <"$T/f.seq")" -- "$T/k.err"
ok "keep --from: $SPLIT = all $N markers once; perf reads the file; summary says $w"

# --- SIGUSR2 to the record process, with --keep-as --------------------------------
F2=$T/usr2.data
"$PERFMARK" record --keep-as kept2 -o "$F2" -- "$PROGS/prog-children" split "$N" "$T/go2" >"$T/u.out" 2>"$T/u.err" &
up=$!
_bg_pids+=("$up")
wait_for has_line "$T/u.out" '^at ' || die "the workload did not start" -- "$T/u.err"
kill -USR2 "$up"
wait_for listed kept2 || die "SIGUSR2 made no session kept2" -- "$T/u.err" "$T/pmd.log"
touch "$T/go2"
wait "$up"
rc=$?
[ "$rc" -eq 0 ] || die "record exited $rc after SIGUSR2" -- "$T/u.err"
grep -q "goes on as session 'kept2'" "$T/u.err" || die "record does not say it was kept" -- "$T/u.err"
pm session snapshot kept2 -o "$T/kept2.data" || die "snapshot kept2"
check_split "$F2" "$T/kept2.data" "SIGUSR2"
ok "SIGUSR2 --keep-as: $SPLIT"

# a kept session is a session like any: it survives kill -9 of perfmarkd
daemon_kill9
daemon_start_shared
listed kept1 && listed kept2 || die "kept sessions gone after perfmarkd's restart" -- "$T/pmd.log"
grep -q "session 'kept1': adopted the pinned collection" "$T/pmd.log" || die "kept1 not adopted" -- "$T/pmd.log"
pm session snapshot kept1 -o "$T/kept1b.data" || die "snapshot kept1 after the restart"
n=$(seqs "$KIND" "$T/kept1b.data" | wc -l)
[ "$n" -eq "$(seqs "$KIND" "$T/kept1.data" | wc -l)" ] || die "kept1 held $n markers after the restart" -- "$T/pmd.log"
ok "kept sessions survive kill -9 of perfmarkd, adopted, their $n markers kept"

# in-process, SIGUSR2 is a notice, even one sent while record is still
# starting; the command does not inherit it blocked
PERFMARK_NO_DAEMON=1 "$PERFMARK" record -o "$T/inproc.data" -- sh -c \
	'while [ ! -e "$0" ]; do sleep 0.05; done; grep SigBlk /proc/self/status' "$T/go3" >"$T/i.out" 2>"$T/i.err" &
ip=$!
# once perfmark runs (SIGUSR2 blocked from its first line), long before its recording starts
usr2_blocked() { local b; b=$(awk '/^SigBlk/ { print $2 }' /proc/"$1"/status 2>/dev/null) && [ -n "$b" ] && [ $((0x$b & 0x800)) -ne 0 ]; }
wait_for usr2_blocked "$ip" || die "perfmark record never blocked SIGUSR2"
kill -USR2 "$ip"
touch "$T/go3"
wait "$ip"
rc=$?
[ "$rc" -eq 0 ] || die "in-process record exited $rc at an early SIGUSR2" -- "$T/i.err"
grep -q "^perfmark: SIGUSR2: only a recording through perfmarkd can be kept" "$T/i.err" || die "no notice" -- "$T/i.err"
blk=$(awk '/^SigBlk/ { print $2 }' "$T/i.out")
[ -n "$blk" ] && [ $((0x$blk & 0x800)) -eq 0 ] || die "the command inherited SIGUSR2 blocked ($blk)" -- "$T/i.out"
perf report -i "$T/inproc.data" --header-only 2>/dev/null | grep -q 'cmdline : ' || die "in-process file not finished"
ok "in-process: SIGUSR2 is a notice, the recording goes on, the command's mask is clean"

# --- a pipe (-o -) kept into files (-o DIR): the stream ends complete ------------
mkdir "$T/kdir"
"$PERFMARK" record -o - -- "$PROGS/prog-children" split "$N" "$T/go4" 2>"$T/p.err" 3>&- >"$T/pipe.data" </dev/null &
pp=$!
_bg_pids+=("$pp")
wait_for has_line "$T/pmd.log" "uid 0 (pid $pp) records" || die "record -o - is not through perfmarkd" -- "$T/p.err"
# the workload's "at" line went into the stream: wait for its markers instead
wait_for eval '[ "$(stat -c %s "$T/pipe.data")" -gt 100000 ]' || die "no stream" -- "$T/p.err"
pm session keep kept3 --from "$pp" -o "$T/kdir" >/dev/null 2>"$T/keep3.err" || die "keep of a pipe into a directory failed" -- "$T/keep3.err"
touch "$T/go4"
wait "$pp" || die "record -o - failed after keep" -- "$T/p.err"
grep -q "goes on as session 'kept3'" "$T/p.err" || die "record -o - does not say it was kept" -- "$T/p.err"
pm session stop kept3 || die "stop kept3"
kf=$(ls "$T/kdir"/*.data 2>/dev/null)
[ "$(echo "$kf" | wc -l)" -eq 1 ] && [ -s "$kf" ] || die "kept3 wrote no file into its directory: $kf"
# stock perf reads the stream from a pipe (perf's pipe mode needs one)
pf=$(cat "$T/pipe.data" | perf script -i - 2>/dev/null | grep -c 'perfmark:uevent:')
"$PERFMARK" script -i "$T/pipe.data" --json --type "$KIND" >/dev/null 2>&1 ||
	die "perfmark script cannot read the kept stream"
check_pipe_split() {
	seqs "$KIND" "$T/pipe.data" >"$T/f.seq"
	seqs "$KIND" "$kf" >"$T/s.seq"
	local nf ns dup all
	nf=$(wc -l <"$T/f.seq") ns=$(wc -l <"$T/s.seq")
	dup=$(sort -n "$T/f.seq" "$T/s.seq" | uniq -d | wc -l)
	all=$(sort -n "$T/f.seq" "$T/s.seq" | uniq | wc -l)
	[ "$dup" -eq 0 ] && [ "$all" -eq "$N" ] && [ "$nf" -gt 0 ] && [ "$ns" -gt 0 ] ||
		die "pipe kept into files: stream $nf, files $ns, $dup twice, $all distinct (want $N)" -- "$T/pmd.log"
	[ "$pf" -eq "$nf" ] || die "perf script -i - prints $pf markers of the stream's $nf"
	SPLIT="stream $nf + files $ns"
}
check_pipe_split
pm session delete kept3
ok "record -o - kept into -o DIR: $SPLIT, every marker once; perf reads the stream"

# errors: one line, exit 1, nothing changed
out=$(pm session keep kept1 --from "$$" 2>&1) && die "keep under an existing name accepted"
[ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "^perfmark: .*session 'kept1' already exists" ||
	die "existing name: $out"
out=$(pm session keep other --from "$$" 2>&1) && die "keep of a process that does not record accepted"
echo "$out" | grep -q "^perfmark: no recording of yours through perfmarkd in process $$" || die "not recording: $out"
out=$(pm session keep other 2>&1) && die "keep without --from accepted"
echo "$out" | grep -q '^perfmark: ' || die "no --from: $out"
listed other && die "a refused keep left a session"
ok "keep refused: existing name, a process that does not record, no --from"

# --- take: the ring, then live; deleted when the taker ends ------------------------
"$PERFMARK" session take kept1 -o "$T/take1.data" 2>"$T/take1.err" &
tp=$!
wait_for has_line "$T/pmd.log" "session 'kept1' taken by uid 0 (pid $tp)" || die "take did not start" -- "$T/take1.err" "$T/pmd.log"
# a second taker is refused while the first holds it
out=$(pm session take kept1 -o "$T/take1b.data" 2>&1) && die "a second take accepted"
echo "$out" | grep -q "is being taken already" || die "second take: $out"
[ -e "$T/take1b.data" ] && die "a refused take left its output"
kill -TERM "$tp"
wait "$tp"
rc=$?
[ "$rc" -eq 0 ] || die "take exited $rc at SIGTERM" -- "$T/take1.err"
wait_for eval '! listed kept1' || die "kept1 still listed after its taker ended" -- "$T/pmd.log"
n=$(cat "$T/take1.data" | perf script -i - 2>/dev/null | grep -c 'perfmark:uevent:')
s=$(seqs "$KIND" "$T/kept1.data" | wc -l)
[ "$n" -ge "$s" ] || die "take's stream holds $n markers, the session had $s" -- "$T/take1.err"
ok "take: $n markers streamed (the session held $s), kept1 deleted at SIGTERM"

# a taker killed with -9: the session goes too
"$PERFMARK" session take kept2 -o "$T/take2.data" 2>/dev/null &
tp=$!
wait_for has_line "$T/pmd.log" "session 'kept2' taken by uid 0 (pid $tp)" || die "take 2 did not start" -- "$T/pmd.log"
{ kill -9 "$tp"; wait "$tp"; } 2>/dev/null   # quiet: bash would say "Killed"
wait_for eval '! listed kept2' || die "kept2 still listed after its taker was killed" -- "$T/pmd.log"
ok "take: kept2 deleted when its taker was killed"

# --- who may ----------------------------------------------------------------------
# the member records through perfmarkd
as_member "$PERFMARK" record -o "$W/m.data" -- "$PROGS/prog-children" split "$N" "$W/gom" >"$W/m.out" 2>"$W/m.err" &
mp=$!
_bg_pids+=("$mp")
# and root
"$PERFMARK" record -o "$T/r.data" -- "$PROGS/prog-children" split "$N" "$T/gor" >"$T/r.out" 2>"$T/r.err" &
rp=$!
_bg_pids+=("$rp")
wait_for has_line "$W/m.out" '^at ' || die "the member's workload did not start" -- "$W/m.err" "$T/pmd.log"
wait_for has_line "$T/r.out" '^at ' || die "root's workload did not start" -- "$T/r.err"
# the member's record process (under setpriv, $! is the shell's)
mrec=$(sed -n "s/.*uid $MEMBER_UID (pid \([0-9]*\)) records pid .*/\1/p" "$T/pmd.log" | tail -1)
[ -n "$mrec" ] || die "the member's record is not through perfmarkd" -- "$T/pmd.log"
out=$(as_member "$PERFMARK" session keep stolen --from "$rp" 2>&1) && die "the member kept root's recording"
echo "$out" | grep -q "^perfmark: no recording of yours through perfmarkd in process $rp" || die "member keeps root's: $out"
out=$(as_uid "$MEMBER2_UID" "$PERFMARK" session keep stolen --from "$mrec" 2>&1) && die "another member kept the member's recording"
echo "$out" | grep -q "^perfmark: no recording of yours" || die "member2 keeps member's: $out"
out=$(as_outsider "$PERFMARK" session keep stolen --from "$mrec" 2>&1) && die "an outsider kept a recording"
echo "$out" | grep -q '^perfmark: permission denied' || die "outsider: $out"
listed stolen && die "a refused keep made a session"
# nor into a directory that is not theirs (perfmarkd writes there as root)
out=$(as_member "$PERFMARK" session keep mk2 --from "$mrec" -o "$T" 2>&1) && die "the member kept into root's directory"
echo "$out" | grep -q "^perfmark: output directory .* is not the recording owner's: permission denied" || die "member dir: $out"
listed mk2 && die "a refused keep made a session"
# root may keep the member's: the session is the member's
pm session keep mkept --from "$mrec" >/dev/null 2>"$T/mk.err" || die "root cannot keep the member's recording" -- "$T/mk.err"
pm session show mkept --json | grep -q "\"owner\":$MEMBER_UID" || die "mkept is not the member's"
touch "$W/gom" "$T/gor"
wait "$mp" || die "the member's record failed after keep" -- "$W/m.err"
wait "$rp" || die "root's record failed" -- "$T/r.err"
grep -q "goes on as session 'mkept'" "$W/m.err" || die "the member's record does not say it was kept" -- "$W/m.err"
cp "$W/m.data" "$T/m.data"      # perf reads only files of its own user
as_member "$PERFMARK" session snapshot mkept -o "$W/mk.data" || die "the member cannot snapshot mkept"
cp "$W/mk.data" "$T/mk.data"
check_split "$T/m.data" "$T/mk.data" "member's, kept by root"
# another member cannot take it (not even see it); the owner can
out=$(as_uid "$MEMBER2_UID" "$PERFMARK" session take mkept -o "$W/t2.data" 2>&1) && die "member2 took the member's session"
echo "$out" | grep -q "no such session 'mkept'" || die "member2 take: $out"
listed mkept || die "a refused take deleted the session"
as_member "$PERFMARK" session take mkept -o "$W/mt.data" 2>"$W/mt.err" &
tp=$!
wait_for has_line "$T/pmd.log" "session 'mkept' taken by uid $MEMBER_UID" || die "the member cannot take mkept" -- "$W/mt.err" "$T/pmd.log"
mtake=$(sed -n "s/.*session 'mkept' taken by uid $MEMBER_UID (pid \([0-9]*\)).*/\1/p" "$T/pmd.log")
kill -TERM "$mtake"
wait "$tp" || die "the member's take failed" -- "$W/mt.err"
wait_for eval '! listed mkept' || die "mkept still listed after its owner took it"
n=$(cat "$W/mt.data" | perf script -i - 2>/dev/null | grep -c 'perfmark:uevent:')
[ "$n" -ge "$(wc -l <"$T/s.seq")" ] || die "the member's take holds $n markers"
ok "who: keep only by the recording's owner or root, take only by the session's owner or root ($SPLIT)"
