#!/usr/bin/env bash
# --call-graph ehframe in a perfmarkd session: `session create` takes it, a
# program started after the session (built without frame pointers) has
# whole stacks in a snapshot, and `session show` reports the unwinder: the
# stacks, those that ended early, the table memory and its cap (set small
# here with PERFMARK_UNWIND_CAP: tables are evicted under it, and counted).
# After kill -9 and a restart the daemon adopts the pinned programs and fills
# their maps again: a program started then has whole stacks too.
# The session records this script and its children (-p $$): under a 1 MiB
# cap, system-wide, whatever else the machine runs could hold the whole cap
# with its tables, and prog-unwind would have none.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/unwind-lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-unwind" ] || skip "no prog-unwind"
command -v xz >/dev/null || die "xz not installed (xz-utils)"
PERFMARK_UNWIND_CAP=1M daemon_start

pm session create uw1 -p $$ --call-graph ehframe --no-markers --ring 64M || die "create failed" -- "$T/pmd.log"
pm session show uw1 | grep -q "call graph ehframe" || die "show does not say ehframe" -- "$T/pmd.log"
"$PROGS/prog-unwind" tree 1.5 >/dev/null
# more ELF files than a 1 MiB cap holds at once: python3 alone is 0.5 MiB of rows
/usr/bin/python3 -c 'sum(i * i for i in range(3000000))'
head -c 300000 /dev/urandom | xz -6 -T1 >/dev/null
# (a snapshot has everything up to its moment)
pm session snapshot uw1 -o "$T/snap" || die "snapshot failed" -- "$T/pmd.log"
read -r m n < <(chains_with "$T/snap" prog-unwind main t1)
[ "$n" -ge 1000 ] || die "snapshot: $n samples through t1" -- "$T/pmd.log"
fcmp "$m / $n >= 0.95" || die "snapshot: $m of $n samples through t1 reach main"
ok "session snapshot: $m of $n samples of prog-unwind (no frame pointers) reach main"

pm session show uw1 >"$T/show"
grep -q "^unwind: .* user stacks" "$T/show" || die "session show has no unwind line" -- "$T/show"
grep -q "cap 1 MiB" "$T/show" || die "session show does not give the 1 MiB cap" -- "$T/show"
ev=$(sed -n 's/.* \([0-9]\+\) evicted.*/\1/p' "$T/show")
[ "${ev:-0}" -ge 1 ] || die "no table evicted under a 1 MiB cap" -- "$T/show"
pm session show uw1 --json >"$T/show.json"
/usr/bin/python3 - "$T/show.json" <<'PY' || die "session show --json lacks the unwind figures" -- "$T/show.json"
import json, sys
u = json.load(open(sys.argv[1]))["unwind"]
assert u["cap"] == 1 << 20 and u["stacks"] > 0 and u["pool_bytes"] <= u["cap"], u
assert set(u["ends"]) == {"complete", "depth", "no_table", "unreadable", "unsupported"}, u
PY
ok "session show: $(sed -n 's/^unwind: *//p' "$T/show")"

daemon_kill9
PERFMARK_UNWIND_CAP=1M daemon_start
grep -q "adopted" "$T/pmd.log" || die "the restarted daemon did not adopt uw1" -- "$T/pmd.log"
# This daemon is a child of this script: one of uw1's processes, sampled as
# it takes the ring over.  Its own files need 1.2 MiB of rows, all in use
# while it runs: with them the cap was full, prog-unwind's table refused and
# its frames left to frame pointers it has none of (it failed so, now and
# then).  The recorder gets no tables: once its samples are read (a snapshot
# reads up to its moment) and the builds are done, no table was refused for
# room.  (grep, not python3: the tables of what runs here count too.)
pm session snapshot uw1 -o "$T/snap-adopted" || die "snapshot after the restart failed" -- "$T/pmd.log"
uw_built() { pm session show uw1 | grep -q " 0 tables being built"; }
wait_until 60 uw_built || die "tables still being built after the restart" -- "$T/pmd.log"
oc=$(pm session show uw1 --json | grep -o '"over_cap": *[0-9]*' | grep -o '[0-9]*$')
[ "${oc:-1}" -eq 0 ] || { pm session show uw1 >"$T/show2"; die "after the restart, $oc tables had no room before prog-unwind ran" -- "$T/show2"; }
"$PROGS/prog-unwind" tree 1.5 >/dev/null &
tree=$!; wait $tree
pm session snapshot uw1 -o "$T/snap2" || die "snapshot after the restart failed" -- "$T/pmd.log"
perf script -i "$T/snap2" -F comm,pid,ip,sym 2>/dev/null | awk -v p="$tree" '
	BEGIN { RS = "" } { split($0, l, "\n"); split(l[1], h, " "); if (h[2] != p) next
	n++; if ($0 ~ /\n[^\n]* t1\n/ && $0 ~ /\n[^\n]* main(\n|$)/) m++ } END { print m + 0, n + 0 }' >"$T/after"
read -r m n <"$T/after"
# what the snapshot holds of the new prog-unwind, to tell missing symbols from short stacks
why_after() {
	{ snapshot_holds "$T/snap2" prog-unwind "$tree"
	  echo "session show:"; pm session show uw1; } >"$T/after.why" 2>&1
}
[ "$n" -ge 1000 ] || { why_after; die "after the restart: $n samples of prog-unwind pid $tree" -- "$T/after.why" "$T/pmd.log"; }
fcmp "$m / $n >= 0.9" || { why_after; die "after the restart: $m of $n samples reach main through t1" -- "$T/after.why"; }
ok "after kill -9 and a restart: $m of $n samples of a new prog-unwind reach main"
pm session delete uw1 >/dev/null 2>&1
