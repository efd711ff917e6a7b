#!/usr/bin/env bash
# A process's markers reach the fast lane from its first one (issue 24):
# libperfmark offers its area as it loads when a recorder listens, so the
# recorder joins while the process starts; the trap lane is left for the
# markers before that and for a full ring.  record -v counts the markers of
# each lane, and says why each trap-lane marker took it (the library tells
# the trap site).
#  - a process that waits, before its first marker, for the recorder to
#    have joined its area (found in its own maps): it is joined (before the
#    fix the area came with the first marker: never), and, when every
#    recorder on the machine holding a register site has joined too (other
#    sessions: the library waits for all of them), every marker but the
#    first goes through the fast lane (the first takes the trap lane
#    and offers the area again: whose the markers are is decided then, so
#    a process that makes itself non-dumpable after loading is not
#    recorded as its user's: t-hostile-setuid);
#  - a process that emits from its first instruction: every marker is in
#    the file, and the lanes' counts add up to them, the trap lane's only
#    for reasons of the start or a full ring;
#  - PERFMARK_FASTLANE=0: all of them down the trap lane, counted as such.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_markers
PF=$PROGS/prog-first
[ -x "$PF" ] || skip "no test program $PF"
TYPE=65936   # TYPE_FIRST in prog-first.c (PERFMARK_TYPE_APP_FIRST + 400)
N=10000      # 48-byte records: within one 1 MiB ring, no ring ever full

# lanes FILE: "FAST TRAP" from the record -v line that counts them (empty: none)
lanes() {
	sed -n 's/.*perfmark record: \([0-9]*\) markers through the fast lane, \([0-9]*\) through the trap lane.*/\1 \2/p' "$1"
}

# --- joined before the first marker: everything through the fast lane ---------
"$PERFMARK" record -v -o "$T/wait.data" -- "$PF" wait $N >"$T/wait.out" 2>"$T/wait.err" ||
	die "record exited $?" -- "$T/wait.err" "$T/wait.out"
grep -qx 'joined_before_first 1' "$T/wait.out" ||
	die "the recorder had not joined the area before the process's first marker (no area offered at load?)" -- "$T/wait.out" "$T/wait.err"
seqs $TYPE "$T/wait.data" >"$T/wait.seq"
[ "$(contiguous "$T/wait.seq")" = "0 $((N - 1)) $N" ] ||
	die "want markers 0..$((N - 1)) in the file, got '$(contiguous "$T/wait.seq")'" -- "$T/wait.err"
read -r fast trap <<<"$(lanes "$T/wait.err")"
[ -n "$fast" ] || die "record -v does not count the markers by lane" -- "$T/wait.err"
if grep -qx 'all_joined 1' "$T/wait.out"; then
	[ "$trap" -eq 1 ] && [ "$fast" -eq $((N - 1)) ] ||
		die "want $((N - 1)) markers through the fast lane and the first through the trap, record -v says $fast fast, $trap trap" -- "$T/wait.err"
	grep -q "through the trap lane (1 the first marker: it offers the area)" "$T/wait.err" ||
		die "the one trap-lane marker should be the first" -- "$T/wait.err"
	ok "joined before the first marker: $fast markers through the fast lane, only the first through the trap"
else
	# another recorder on the machine holds a register site and had not
	# joined (a session of a daemon that is down, a loaded one): the library
	# waits for it, through the trap lane; the lanes still add up
	grep -qx 'readers_unjoined 0' "$T/wait.out" ||
		die "a recorder reads the area without having joined it" -- "$T/wait.out"
	[ $((fast + trap)) -eq "$N" ] ||
		die "the lanes count $fast + $trap, the file holds $N" -- "$T/wait.err"
	ok "joined before the first marker (another recorder on the machine had not): $fast fast, $trap trap, $N in all"
fi

# --- from the first instruction: every marker there, each lane's count adds up ---
"$PERFMARK" record -v -o "$T/now.data" -- "$PF" nowait $N >"$T/now.out" 2>"$T/now.err" ||
	die "record exited $?" -- "$T/now.err"
seqs $TYPE "$T/now.data" >"$T/now.seq"
[ "$(contiguous "$T/now.seq")" = "0 $((N - 1)) $N" ] ||
	die "nowait: want markers 0..$((N - 1)), got '$(contiguous "$T/now.seq")'" -- "$T/now.err"
read -r fast trap <<<"$(lanes "$T/now.err")"
[ -n "$fast" ] && [ $((fast + trap)) -eq "$N" ] ||
	die "nowait: the lanes count $fast + $trap, the file holds $N" -- "$T/now.err"
line=$(grep 'through the trap lane' "$T/now.err")
# the trap lane's reasons: only the start's and a full ring's, and they add up
why=$(sed -n 's/.*through the trap lane (\(.*\)) ].*/\1/p' <<<"$line")
sum=0
if [ "$trap" -gt 0 ]; then
	[ -n "$why" ] || die "nowait: $trap trap-lane markers with no reason given" -- "$T/now.err"
	while read -r k rest; do
		case $rest in
		"the first marker: it offers the area"|"before the recorders joined"|"ring full") ;;
		*) die "nowait: trap-lane markers for an unexpected reason: '$k $rest'" -- "$T/now.err";;
		esac
		sum=$((sum + k))
	done < <(tr ',' '\n' <<<"$why" | sed 's/^ *//')
fi
[ "$sum" -eq "$trap" ] || die "nowait: the reasons add up to $sum, the trap lane took $trap" -- "$T/now.err"
ok "from the first instruction: $N markers, $fast through the fast lane, $trap through the trap${why:+ ($why)}"

# --- the fast lane off: every marker down the trap lane, and said so -------------
PERFMARK_FASTLANE=0 "$PERFMARK" record -v -o "$T/off.data" -- "$PF" nowait 2000 \
	>"$T/off.out" 2>"$T/off.err" || die "record exited $?" -- "$T/off.err"
seqs $TYPE "$T/off.data" >"$T/off.seq"
[ "$(contiguous "$T/off.seq")" = "0 1999 2000" ] ||
	die "fast lane off: want markers 0..1999, got '$(contiguous "$T/off.seq")'" -- "$T/off.err"
grep -q 'perfmark record: 0 markers through the fast lane, 2000 through the trap lane (2000 PERFMARK_FASTLANE=0)' "$T/off.err" ||
	die "fast lane off: record -v should count 2000 trap-lane markers, all for PERFMARK_FASTLANE=0" -- "$T/off.err"
ok "PERFMARK_FASTLANE=0: 2000 markers through the trap lane, each counted with its reason"
echo "t-markers-first: all checks passed"
