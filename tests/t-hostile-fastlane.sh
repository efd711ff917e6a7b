#!/usr/bin/env bash
# Issue 18: a traced process writes its fast-lane rings itself (prog-flhostile
# plays one: its own area, offered through the register sled, written by the
# wire format).  Whatever it writes is data, never control.
#
# Case 4, future times: 500000 markers stamped now + 10^15 ns (and 2000 from
# the past: 0, 10 s before the area was offered), while a child emits honest
# markers through the library.  Before, each such marker stayed in the
# reorder window until the recording ended (200000 of them: 838 MB of RSS)
# and wrecked the timeline.  Now: the recorder stays under 64 MB, every one
# of those times is clamped into what the recorder saw and counted
# (record -v), every marker of the recording lies within its span, and the
# honest child's are all there, within its own span, in order.
#
# Case 10, positions: an area whose slot heads are set before the recorder
# joins, 4 bytes before a ring's end (a filler there whose tag is the next
# slot's head word, then a marker), and 4 bytes before the area's end.  The
# marker after the straddling filler was delivered before, and the last
# slot's first read ran past the mapping; now the area is given up, counted,
# and the process's library markers still go through.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_markers
[ -x /usr/bin/time ] || skip "/usr/bin/time missing (apt-get install time)"
H=$PROGS/prog-flhostile
[ -x "$H" ] || skip "no test program $H"
APP=65536   # PERFMARK_TYPE_APP_FIRST
T_FUTURE=$((APP + 400)) T_ZERO=$((APP + 401)) T_PAST=$((APP + 402))
T_STRADDLE=$((APP + 403)) T_HONEST=$((APP + 404))
N=500000

# --- case 4: the future-time flood ------------------------------------------------
/usr/bin/time -f 'maxrss %M' -o "$T/flood.rss" "$PERFMARK" record -v -z -o "$T/flood.data" -- \
	"$H" flood "$N" 16 >"$T/flood.out" 2>"$T/flood.err" || die "record exited $?" -- "$T/flood.err" "$T/flood.out"
read -r _ hpid <<<"$(grep '^pid ' "$T/flood.out")"
read -r _ written _ t0 t1 <<<"$(grep '^written ' "$T/flood.out")"
read -r _ _ opid _ ot0 _ ot1 _ ocount <<<"$(grep '^honest ' "$T/flood.out")"
[ "$written" = "$N" ] && [ -n "$ocount" ] || die "prog-flhostile flood did not finish" -- "$T/flood.out" "$T/flood.err"

rss=$(sed -n 's/^maxrss //p' "$T/flood.rss")
[ -n "$rss" ] || die "no RSS from /usr/bin/time" -- "$T/flood.rss"
[ "$rss" -lt 65536 ] || die "CASE 4: the recorder reached $((rss / 1024)) MB RSS (want < 64 MB)" -- "$T/flood.err"
ok "the recorder peaked at $((rss / 1024)) MB RSS under $N far-future markers"

clamped=$(sed -n 's/.*: \([0-9]*\) marker times clamped.*/\1/p' "$T/flood.err")
[ -n "$clamped" ] || die "record -v says nothing of clamped times" -- "$T/flood.err"
# all of the flood's times are wrong; an honest marker is clamped only when
# its writer took its time just before the recorder joined (a few)
[ "$clamped" -ge "$N" ] && [ "$clamped" -le $((N + ocount)) ] ||
	die "CASE 4: $clamped times clamped, want $N (+ at most a few honest ones)" -- "$T/flood.err"
ok "$clamped marker times clamped, counted"

# pid type time seq (seq: the honest payload's u64), one line per marker
"$PERFMARK" script -i "$T/flood.data" --json 2>/dev/null | awk "$MARKERS_AWK_HEX"'
	/"event":"perfmark:/ {
		match($0, /"pid":[0-9]+/); pid = substr($0, RSTART + 6, RLENGTH - 6)
		match($0, /"type":[0-9]+/); type = substr($0, RSTART + 7, RLENGTH - 7)
		match($0, /"time":[0-9]+/); time = substr($0, RSTART + 7, RLENGTH - 7)
		seq = -1
		if (match($0, /"data":"[0-9a-f]+"/)) {
			d = substr($0, RSTART + 8, 16); seq = 0
			for (i = 15; i >= 1; i -= 2) seq = seq * 256 + hv(substr(d, i, 2))
		}
		print pid, type, time, seq
	}' >"$T/flood.marks"
[ -s "$T/flood.marks" ] || die "perfmark script shows no markers" -- "$T/flood.data"

# every marker of the recording within its span (the flood's clamped ones too)
awk -v lo="$t0" -v hi="$t1" '$3 < lo || $3 > hi { bad++; if (!ex) ex = $0 }
	END { if (bad) { print bad, "markers outside", lo, hi, "e.g.", ex; exit 1 } }' "$T/flood.marks" ||
	die "CASE 4: markers outside the recording's span: $(awk -v lo="$t0" -v hi="$t1" '$3 < lo || $3 > hi' "$T/flood.marks" | head -n 3 | tr '\n' ';')"
nh=$(awk -v p="$hpid" '$1 == p && ($2 == '"$T_FUTURE"' || $2 == '"$T_ZERO"' || $2 == '"$T_PAST"')' "$T/flood.marks" | wc -l)
[ "$nh" -eq "$N" ] || die "the flood's markers: $nh recorded, $N written"
ok "all $N flood markers recorded, every marker time within the recording's span"

# the honest child's timeline: all of them, in its own span, in order
awk -v p="$opid" -v ty="$T_HONEST" -v lo="$ot0" -v hi="$ot1" -v want="$ocount" '
	$1 == p && $2 == ty {
		if ($4 != n) { print "seq", $4, "where", n, "was due"; exit 1 }
		if ($3 < last) { print "time goes back at seq", $4; exit 1 }
		if ($3 < lo || $3 > hi) { print "seq", $4, "at", $3, "outside", lo, hi; exit 1 }
		last = $3; n++
	}
	END { if (n != want) { print n, "of", want, "honest markers"; exit 1 } }' "$T/flood.marks" >"$T/honest.chk" ||
	die "CASE 4: the honest process's timeline: $(cat "$T/honest.chk")"
ok "the honest process's $ocount markers: all there, in its span, in order"

# --- case 10: positions set before the recorder joins --------------------------------
"$PERFMARK" record -v -o "$T/str.data" -- "$H" straddle >"$T/str.out" 2>"$T/str.err" ||
	die "CASE 10: record exited $? (the recorder read past a slot?)" -- "$T/str.err" "$T/str.out"
read -r _ spid <<<"$(grep '^pid ' "$T/str.out")"
read -r _ _ _ _ _ _ _ _ scount <<<"$(grep '^honest ' "$T/str.out")"
[ "$scount" = 100 ] || die "prog-flhostile straddle did not finish" -- "$T/str.out"
"$PERFMARK" script -i "$T/str.data" --json 2>/dev/null | grep -a "\"pid\":$spid," >"$T/str.marks"
n=$(grep -c "\"type\":$T_STRADDLE," "$T/str.marks")
[ "$n" -eq 0 ] || die "CASE 10: the marker after a filler straddling into the next slot was delivered"
n=$(grep -c "\"type\":$T_HONEST," "$T/str.marks")
[ "$n" -eq 100 ] || die "CASE 10: $n of the process's 100 library markers recorded"
grep -q ' 1 fast-lane areas given up' "$T/str.err" ||
	die "CASE 10: record -v does not count the area given up" -- "$T/str.err"
ok "a straddling position: its area given up and counted; the library's 100 markers recorded"
echo "t-hostile-fastlane: all checks passed"
