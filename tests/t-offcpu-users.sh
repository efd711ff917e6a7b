#!/usr/bin/env bash
# Off-CPU time and who may see what: a member of group perfmark runs a
# system-wide --off-cpu session in perfmarkd, so does root.  A member's
# process blocks on a FIFO that a root process then opens and writes.  The
# member's snapshot holds that wait, but does not name root's process as
# its waker (waker_flags says a task did, its pid and tid are 0, nor where
# it was: no waker stack), holds no
# off-CPU sample of root's processes, and no kernel frame unless the
# machine shows kernel addresses to users; root's session names the waker
# and its stack.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/users-lib.sh"
need_daemon
command -v python3 >/dev/null || skip "python3 missing"
test_users pm21
daemon_start_shared
mkdir -m 0777 "$T/u"
mkfifo -m 0666 "$T/u/fifo"

as_member "$PERFMARK" session create mo -a --no-markers --off-cpu -g -F 99 --ring 16M ||
	die "member: create --off-cpu failed" -- "$T/pmd.log"
pm session create ro -a --no-markers --off-cpu -g -F 99 --ring 16M || die "root: create --off-cpu failed" -- "$T/pmd.log"

# the member's reader blocks in open and read until root's writer comes, 0.3 s later
as_member sh -c 'echo $$ >'"$T/u/reader.pid"'; exec cat '"$T/u/fifo"' >'"$T/u/got" &
rd=$!
wait_lines "$T/u/reader.pid" || die "the member's reader did not start"
# blocked for real (cat, asleep in the FIFO's open), so that a slow exec on a
# loaded machine does not come out of the interval measured
reader_blocked() {
	local p; p=$(cat "$T/u/reader.pid")
	[ "$(cat /proc/"$p"/comm 2>/dev/null)" = cat ] &&
		[ "$(awk '{ print $3 }' /proc/"$p"/stat 2>/dev/null)" = S ]
}
wait_until 60 reader_blocked || die "the member's reader never blocked in the FIFO"
sleep 0.3   # the workload: the reader's blocked interval the sessions measure
sh -c 'echo $$ >'"$T/writer.pid"'; sleep 0.05; echo hello >'"$T/u/fifo"
wait "$rd"
grep -q hello "$T/u/got" || die "the member's reader did not read"
rpid=$(cat "$T/u/reader.pid") wpid=$(cat "$T/writer.pid")
as_member "$PERFMARK" session snapshot mo -o "$T/u/mo.data" || die "member: snapshot failed"
pm session snapshot ro -o "$T/ro.data" || die "root: snapshot failed"
cp "$T/u/mo.data" "$T/mo.data"
for s in mo ro; do
	python3 "$PERFMARK_SRC/tests/offcpu_script.py" "$T/$s.data" >"$T/$s.json" ||
		die "offcpu_script.py failed on $s"
done
python3 - "$T/mo.json" "$T/ro.json" "$rpid" "$wpid" "$MEMBER_UID" <<'PY' ||
import json, os, sys
mo = [json.loads(l) for l in open(sys.argv[1])]
ro = [json.loads(l) for l in open(sys.argv[2])]
mo_pids, ro_pids = [s["pid"] for s in mo], [s["pid"] for s in ro]
rpid, wpid, uid = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
def owner(pid):
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
# the member's session: only the member's processes (those still alive to ask)
others = {p for p in mo_pids if owner(p) not in (None, uid)}
assert not others, ("the member's session holds off-CPU samples of", others)
assert wpid not in mo_pids, "the member's session holds root's writer"
# the reader's long wait: woken by a task, not named to the member
mine = [s for s, p in zip(mo, mo_pids) if p == rpid and s["state"] == 2 and s["period"] > 200e6]
assert mine, "the member's session lacks its reader's wait"
w = max(mine, key=lambda s: s["period"])
print("member sees", w["frames"][:4], "waker", w["waker_flags"], w["waker_pid"], w["waker_tid"])
assert w["waker_flags"] == 1 and w["waker_pid"] == 0 and w["waker_tid"] == 0, w
assert not w["waker_stack"] and w["nr_waker_kstack"] == w["nr_waker_ustack"] == 0, ("root's stack shown", w)
# no kernel frames where users see no kernel addresses
paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
kptr = int(open("/proc/sys/kernel/kptr_restrict").read())
if paranoid > 1 or kptr:
    kframes = [f for s in mo for f in s["frames"] if "[k]" in f or f.startswith("__x64_sys") or
               f in ("entry_SYSCALL_64_after_hwframe", "do_syscall_64")]
    assert not kframes, ("kernel frames in the member's session", kframes[:5])
# root's session: the same wait, its waker named
theirs = [s for s, p in zip(ro, ro_pids) if p == rpid and s["state"] == 2 and s["period"] > 200e6]
assert theirs, "root's session lacks the reader's wait"
w = max(theirs, key=lambda s: s["period"])
print("root sees waker", w["waker_flags"], w["waker_pid"], w["waker_tid"], "at", len(w["waker_stack"]), "frames")
assert w["waker_flags"] == 1 and w["waker_pid"] == wpid, (w, wpid)
assert w["nr_waker_kstack"] > 0 and len(w["waker_stack"]) == w["nr_waker_kstack"] + w["nr_waker_ustack"], w
PY
	die "off-CPU samples crossed users" -- "$T/pmd.log"
ok "a member's --off-cpu session: their own waits only, another user's waker not named, no kernel frames hidden from users"
pm session delete ro
as_member "$PERFMARK" session delete mo
