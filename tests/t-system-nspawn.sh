#!/usr/bin/env bash
# System test: perfmarkd under a real systemd, in a Debian 12 container booted
# with systemd-nspawn.  What it proves, step by step (each one fails the test):
#
#   install   `meson install` with DESTDIR puts perfmark, perfmarkd, the library,
#             perfmarkd.service/.socket and sysusers.d/perfmark.conf where a
#             stock systemd finds them; the unit's ExecStart exists; the
#             binaries resolve every library in a plain Debian 12 (ldd).
#   units     systemd-analyze verify accepts both units; systemd-sysusers
#             creates group perfmark; `systemctl enable` works ([Install]).
#   start     `systemctl start perfmarkd` (Type=notify: only active once the
#             daemon said READY=1); the socket is srw-rw---- root:perfmark; the
#             daemon runs with the unit's hardening in force (no new privs,
#             seccomp, read-only /usr and /etc, capability bounding set without
#             CAP_NET_ADMIN/CAP_SYS_MODULE) and still does everything below.
#   access    a member of group perfmark talks to the daemon; another user
#             gets "Permission denied".
#   collect   `perfmark session create sys -a --ring 16M`; markers-demo, run by
#             an unprivileged user from its home directory (ProtectHome=
#             read-only must not hide it), shows up in a snapshot read by stock
#             `perf script` inside the container: its perf_printf strings,
#             typed markers and cpu-clock samples.
#   files     file sessions (--output, --rotate 1s) of pmuser in its home and
#             of root in /srv write files, the user's owned by the user.
#   restart   `systemctl restart perfmarkd`: a new main pid, the session is
#             listed again, running, and markers emitted after the restart are
#             in the next snapshot; both file sessions write new files after
#             the restart (the sandbox leaves their directories writable).
#   down      with perfmarkd.service and perfmarkd.socket both stopped (socket
#             file gone, pins still under /sys/fs/bpf/perfmark/sys), a workload
#             still gets collected by the pinned BPF side ...
#   activate  ... `systemctl start perfmarkd.socket` alone leaves the service
#             inactive; `perfmark session list` starts it through the socket
#             (is-active afterwards), and the snapshot holds the markers emitted
#             while no daemon ran.
#   watchdog  the daemon sent WATCHDOG=1 (WatchdogTimestamp set), systemd never
#             restarted it (NRestarts=0), its journal has no watchdog timeout.
#   crash     SIGKILL to the daemon: systemd restarts it (Restart=on-failure,
#             NRestarts=1) and the session is running again.  A process that
#             was writing markers through its fast lane when the daemon died,
#             and exited before the daemon was back (RestartSec=3s for this
#             step), has every one of them in the next snapshot, once: its
#             ring outlived it in systemd's fd store (FileDescriptorStoreMax=),
#             which is empty again once the ring was read.  One user's 300
#             processes take at most 256 places in the store.
#   delete    `perfmark session delete sys` removes the pins.
#
# The container: tests/nspawn-rootfs.sh's cached Debian 12 root (make check
# builds it before the tests, showing progress; this test builds it only when
# run alone without one), overlaid or copied to a fresh directory per run.
# It gets its own bpffs instance (mounted by this script, bound on the
# container's /sys/fs/bpf), so its pins never touch the host's /sys/fs/bpf
# and disappear with it; its own network namespace; the host's BTF read-only.
#
# Entering it: systemd is not PID 1 on the host, so there is no machined and
# no `machinectl shell` / `systemd-run -M`.  nspawn runs with --register=no
# --keep-unit (no bus needed) and we enter the container's namespaces with
# `nsenter -t LEADER -a`, LEADER being the container's init (the child of the
# systemd-nspawn process); systemctl inside talks to that init over
# /run/systemd/private.  The same works on hosts that do run systemd.
#
# Pids: the container has its own pid namespace and BPF sees the initial one's
# numbers; perfmarkd reports them as its own namespace numbers them, so comm
# and symbols resolve inside (checked under "collect").
#
# Environment: PERFMARK_BUILD (meson build dir), PM_KEEP=1 (keep the container
# directory), PM_NSPAWN_CACHE (default /var/cache/perfmark-nspawn),
# PM_NSPAWN_MIRROR (default: from apt's sources), PM_NSPAWN_REBUILD=1.
. "$(dirname "$0")/lib.sh"
need_root

PERFMARKD=$PERFMARK_BUILD/perfmarkd
DEMO=$PERFMARK_BUILD/examples/markers-demo
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
[ -x "$PERFMARKD" ] || skip "no perfmarkd binary at $PERFMARKD"
[ -x "$DEMO" ] || skip "no $DEMO"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
grep -qw bpf /proc/filesystems || skip "kernel has no bpffs"

. "$(dirname "$0")/nspawn-rootfs.sh"   # CACHE, SUITE, PKGS, cache_ok, nspawn_build
MACHINE=pmtest$$
started=$SECONDS

step() { echo "== $* ($((SECONDS - started))s)"; }

# ---- host tools ---------------------------------------------------------------
command -v systemd-nspawn >/dev/null && command -v debootstrap >/dev/null ||
	die "systemd-nspawn or debootstrap missing: make check installs systemd-container and debootstrap"
command -v nsenter >/dev/null || skip "nsenter (util-linux) missing"

# ---- the cached root file system (make check builds it first) -------------------
mkdir -p "$CACHE"
exec 9>"$CACHE/lock"
# shared while the cache is in use, exclusive to (re)build it
flock -s -w 600 9 || die "cannot lock $CACHE/lock"
if [ -n "${PM_NSPAWN_REBUILD:-}" ] || ! cache_ok; then
	flock -x -w 600 9 || die "cannot lock $CACHE/lock"
fi
if [ -n "${PM_NSPAWN_REBUILD:-}" ] || ! cache_ok; then
	step "bootstrapping $SUITE from $(nspawn_mirror) into $CACHE/rootfs (cached for later runs)"
	nspawn_build "$T/debootstrap.log"
	case $? in
	0) ;;
	2) skip "the Debian mirror $(nspawn_mirror) is unreachable: $(grep -m 1 -iE 'fail|resolv' "$T/debootstrap.log")";;
	*) die "debootstrap failed, or its root file system lacks systemd, dbus or perf" -- "$T/debootstrap.log";;
	esac
fi

# ---- a fresh copy with the project installed ------------------------------------
# An overlay over the cache (instant; the cache stays untouched), or a copy
# (a few seconds) where overlayfs is missing.  The shared lock keeps a
# rebuild of the cache from pulling it away under a running test.
W=$(mktemp -d /var/tmp/perfmark-nspawn.XXXXXX)
ROOT=$W/root
BPFFS=$W/bpffs
mkdir -p "$ROOT" "$BPFFS" "$W/upper" "$W/work"
flock -s -w 600 9 || die "cannot lock $CACHE/lock"
if mount -t overlay overlay -o "lowerdir=$CACHE/rootfs,upperdir=$W/upper,workdir=$W/work" "$ROOT" 2>/dev/null; then
	step "container root: overlay of $CACHE/rootfs on $ROOT"
else
	step "copying the cached root file system to $ROOT"
	cp -a --reflink=auto "$CACHE/rootfs/." "$ROOT/" || die "cannot copy $CACHE/rootfs"
	flock -u 9
	exec 9>&-
fi

NSPAWN_PID=
LEADER=
sys_cleanup() {
	local i
	if [ -n "$NSPAWN_PID" ] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
		[ -n "$LEADER" ] && nsenter -t "$LEADER" -a systemctl poweroff --no-block >/dev/null 2>&1
		wait_gone 20 "$NSPAWN_PID" || {
			# nspawn turns SIGTERM into an orderly halt of the container
			kill -TERM "$NSPAWN_PID" 2>/dev/null
			wait_gone 10 "$NSPAWN_PID" || kill -KILL "$NSPAWN_PID" 2>/dev/null
		}
	fi
	[ -n "${TIMEOUT_PID:-}" ] && wait "$TIMEOUT_PID" 2>/dev/null
	rmdir "/run/systemd/nspawn/propagate/$MACHINE" 2>/dev/null
	if mountpoint -q "$ROOT" 2>/dev/null; then
		umount "$ROOT" 2>/dev/null || umount -l "$ROOT"
	fi
	if mountpoint -q "$BPFFS" 2>/dev/null; then
		umount "$BPFFS" 2>/dev/null || umount -l "$BPFFS"
	fi
	if grep -q " $W/" /proc/self/mountinfo; then
		echo "LEAK: mounts left under $W:"; grep " $W/" /proc/self/mountinfo
		awk -v w="$W/" 'index($5, w) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
			while read -r m; do umount -l "$m"; done
	fi
	if [ -n "${PM_KEEP:-}" ]; then
		echo "kept $W"
	else
		rm -rf "$W"
	fi
	cleanup   # lib.sh: background jobs, $T
}
trap sys_cleanup EXIT

step "installing the build ($PERFMARK_BUILD) into the container"
DESTDIR=$ROOT meson install -C "$PERFMARK_BUILD" --no-rebuild --quiet >"$T/install.log" 2>&1 ||
	die "meson install failed" -- "$T/install.log"
prefix=$(meson introspect --buildoptions "$PERFMARK_BUILD" 2>/dev/null |
	python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])' 2>/dev/null)
prefix=${prefix:-/usr/local}
UNITDIR=$prefix/lib/systemd/system
for f in "$UNITDIR/perfmarkd.service" "$UNITDIR/perfmarkd.socket" "$prefix/lib/sysusers.d/perfmark.conf" \
	"$prefix/bin/perfmark"; do
	[ -f "$ROOT$f" ] || die "meson install did not create $f" -- "$T/install.log"
done
execstart=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$ROOT$UNITDIR/perfmarkd.service")
[ -x "$ROOT$execstart" ] ||
	die "perfmarkd.service runs $execstart, which the install did not create ($(cd "$ROOT" && find . -name perfmarkd -type f | head -n 3 | tr '\n' ' '))"
cp "$DEMO" "$ROOT/usr/local/bin/markers-demo"
cp "$PERFMARK_BUILD/tests/prog-emit" "$ROOT/usr/local/bin/prog-emit" || die "no $PERFMARK_BUILD/tests/prog-emit"
chroot "$ROOT" ldconfig || die "ldconfig in the container failed"
for b in "$execstart" "$prefix/bin/perfmark" /usr/local/bin/markers-demo; do
	if chroot "$ROOT" ldd "$b" 2>&1 | grep -q 'not found'; then
		die "$b misses libraries in a plain Debian 12: $(chroot "$ROOT" ldd "$b" 2>&1 | grep 'not found' | tr -s ' \t' ' ')"
	fi
done
ok "installed: units in $UNITDIR, ExecStart=$execstart, libraries resolve"

# ---- boot ------------------------------------------------------------------------
# A private bpffs instance for the container: pins are isolated from the host's
# /sys/fs/bpf (and from any perfmarkd there) and vanish with the container.
mount -t bpf bpf "$BPFFS" || skip "cannot mount a bpffs instance (mount -t bpf)"
step "booting the container $MACHINE"
timeout -k 10 1800 systemd-nspawn --boot -D "$ROOT" --machine="$MACHINE" \
	--register=no --keep-unit --private-network --console=read-only \
	--capability=all --system-call-filter='bpf perf_event_open' \
	--bind="$BPFFS:/sys/fs/bpf" --bind-ro=/sys/kernel/btf \
	>"$T/console.log" 2>&1 9>&- &
TIMEOUT_PID=$!
nspawn_started() { NSPAWN_PID=$(pgrep -P "$TIMEOUT_PID" -x systemd-nspawn); [ -n "$NSPAWN_PID" ]; }
wait_until 30 nspawn_started || die "systemd-nspawn did not start" -- "$T/console.log"

# the container's init: the child of nspawn that runs systemd (or nspawn is gone)
leader_found() {
	local p
	kill -0 "$NSPAWN_PID" 2>/dev/null || return 0
	for p in $(pgrep -P "$NSPAWN_PID"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = systemd ] && LEADER=$p
	done
	[ -n "$LEADER" ]
}
wait_until 60 leader_found
if [ -z "$LEADER" ]; then
	if grep -qiE 'Operation not permitted|Failed to (allocate|create).*namespace|not supported' "$T/console.log"; then
		skip "this host cannot run systemd-nspawn: $(grep -m 1 -iE 'not permitted|namespace|not supported' "$T/console.log")"
	fi
	die "the container's systemd did not start" -- "$T/console.log"
fi

# Run a command inside the container with a clean environment.
ct() {
	nsenter -t "$LEADER" -a env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM=dumb SYSTEMD_PAGER=cat SYSTEMD_COLORS=0 "$@"
}
ct_sh() { ct /bin/sh -c "$1"; }

state=
booted() {
	state=$(ct systemctl is-system-running 2>/dev/null)
	case $state in running|degraded) return 0;; esac
	return 1
}
wait_until 120 booted || die "the container did not finish booting (state '$state')" -- "$T/console.log"
# degraded: units of the minimal Debian failed; none of them may be perfmark's
failed_units=$(ct systemctl --failed --no-legend --plain | awk '{ print $1 }' | tr '\n' ' ')
case $failed_units in
*perfmark*) die "a perfmark unit failed while the container booted: $failed_units" -- "$T/console.log";;
esac
ok "container booted ($state${failed_units:+, failed units not ours: $failed_units}), leader pid $LEADER, entered with nsenter"

# Diagnostics for any failure from here on.
dump() {
	echo "---- systemctl status perfmarkd.service perfmarkd.socket"
	ct systemctl status --no-pager -l perfmarkd.service perfmarkd.socket 2>&1 | tail -n 30
	echo "---- journal (perfmarkd)"
	ct journalctl --no-pager -u perfmarkd.service -u perfmarkd.socket 2>&1 | tail -n 40
	echo "---- journal (all, last lines)"
	ct journalctl --no-pager 2>&1 | grep -v 'perfmarkd\[' | tail -n 15
	echo "---- the container's init (pid $LEADER on the host): state, CPU ticks, what it waits in"
	awk '{ print "state", $3, "utime", $14, "stime", $15 }' "/proc/$LEADER/stat" 2>&1
	cat "/proc/$LEADER/wchan" 2>/dev/null; echo
	echo "---- console (last lines)"
	tail -n 15 "$T/console.log"
}
fail() { echo "FAIL: $*"; dump; exit 1; }

# ---- units -----------------------------------------------------------------------
step "units"
ct systemd-analyze verify --man=no "$UNITDIR/perfmarkd.service" "$UNITDIR/perfmarkd.socket" >"$T/verify.log" 2>&1 ||
	die "systemd-analyze verify rejects the units" -- "$T/verify.log"
# what it says of other units (the base system's) is theirs; of ours, nothing
grep -i 'perfmark' "$T/verify.log" && die "systemd-analyze verify warns about our units" -- "$T/verify.log"
ct systemd-sysusers || fail "systemd-sysusers failed"
ct getent group perfmark >/dev/null || fail "systemd-sysusers did not create group perfmark"
ct systemctl daemon-reload || fail "daemon-reload failed"
ct systemctl enable perfmarkd.service >"$T/enable.log" 2>&1 || die "systemctl enable failed" -- "$T/enable.log"
ct systemctl is-enabled perfmarkd.socket >/dev/null || die "enable did not enable perfmarkd.socket (Also=)" -- "$T/enable.log"
ok "units verify (other units: $(wc -l <"$T/verify.log") lines), group perfmark exists, enable works"

# ---- start -----------------------------------------------------------------------
step "systemctl start perfmarkd"
ct systemctl start perfmarkd || fail "systemctl start perfmarkd failed"
[ "$(ct systemctl is-active perfmarkd.service)" = active ] || fail "perfmarkd.service is not active"
[ "$(ct systemctl is-active perfmarkd.socket)" = active ] || fail "perfmarkd.socket is not active"
sock=$(ct stat -c '%A %U:%G' /run/perfmark/perfmarkd.sock) || fail "no /run/perfmark/perfmarkd.sock"
[ "$sock" = "srw-rw---- root:perfmark" ] || fail "socket is '$sock', want 'srw-rw---- root:perfmark'"
pid1=$(ct systemctl show -p MainPID --value perfmarkd.service)
[ "${pid1:-0}" -gt 0 ] || fail "no main pid"
status=$(ct cat "/proc/$pid1/status")
grep -q '^NoNewPrivs:[[:space:]]*1' <<<"$status" || fail "NoNewPrivileges= not in force"
grep -q '^Seccomp:[[:space:]]*2' <<<"$status" || fail "no seccomp filter (SystemCallFilter=) in force"
capbnd=$((16#$(awk '/^CapBnd:/ { print $2 }' <<<"$status")))
(( capbnd & (1 << 12) )) && fail "CAP_NET_ADMIN is in the daemon's bounding set"
(( capbnd & (1 << 16) )) && fail "CAP_SYS_MODULE is in the daemon's bounding set"
(( capbnd & (1 << 39) )) || (( capbnd & (1 << 21) )) || fail "neither CAP_BPF nor CAP_SYS_ADMIN in the bounding set"
# the options of the mount a path is on, in the daemon's mount namespace
mount_opts_of() {
	ct awk -v d="$1" '{ m = $5; if ((d == m || index(d, m == "/" ? "/" : m "/") == 1) && length(m) >= best) { best = length(m); o = $6 } }
		END { print o }' "/proc/$pid1/mountinfo"
}
for d in /usr /etc; do
	mount_opts_of "$d" | grep -q '^ro' || fail "$d is not read-only for the daemon (ProtectSystem=full)"
done
# the loop raised its priority (CAP_SYS_NICE kept): at nice 0, 300 traced
# processes beside two CPU hogs kept it off the CPU past the watchdog
nice=$(ct awk '{ print $19 }' "/proc/$pid1/stat")
[ "$nice" = -10 ] || fail "perfmarkd's loop runs at nice '$nice', want -10 (CAP_SYS_NICE in the unit's bounding set)"
# ... and its session's scheduling group (autogroups): a thread's nice counts only inside it
if [ -e /proc/self/autogroup ]; then
	ag=$(ct cat "/proc/$pid1/autogroup")
	[[ "$ag" == *"nice -10" ]] || fail "perfmarkd's autogroup is '$ag', want nice -10"
	nice="$nice, its autogroup at ${ag##* }"
fi
ok "perfmarkd active (pid $pid1) with its hardening: NoNewPrivs, seccomp, read-only /usr and /etc, bounded capabilities; its loop at nice $nice"

# ---- access ----------------------------------------------------------------------
step "access through the socket's group"
ct useradd -m -G perfmark pmuser || fail "useradd pmuser"
ct useradd -m pmother || fail "useradd pmother"
ct runuser -u pmuser -- perfmark session list >"$T/list-user.out" 2>&1 ||
	die "a member of group perfmark cannot list sessions" -- "$T/list-user.out"
if ct runuser -u pmother -- perfmark session list >"$T/list-other.out" 2>&1; then
	die "a user outside group perfmark can use the daemon" -- "$T/list-other.out"
fi
grep -qi 'permission denied' "$T/list-other.out" || die "outsider's error does not say why" -- "$T/list-other.out"
ok "group perfmark may use the socket, others get: $(head -n 1 "$T/list-other.out")"

# ---- collect ---------------------------------------------------------------------
# markers: "markers-demo start: SECS s of work" tells the runs apart
demo_as_user() {   # SECS
	ct_sh "install -o pmuser -m 755 /usr/local/bin/markers-demo /home/pmuser/markers-demo &&
	       runuser -u pmuser -- /home/pmuser/markers-demo $1 >/dev/null"
}
snapshot() {       # NAME: snapshot into /tmp/NAME.data in the container, perf script into $T/NAME.txt
	ct perfmark session snapshot sys -o "/tmp/$1.data" >"$T/$1.err" 2>&1 || fail "snapshot $1 failed: $(cat "$T/$1.err")"
	ct perf script -i "/tmp/$1.data" >"$T/$1.txt" 2>"$T/$1.perr"
	[ -s "$T/$1.txt" ] || die "perf script shows nothing of snapshot $1" -- "$T/$1.perr"
}
# snapshot_demo NAME SECS: a snapshot holding markers-demo SECS's whole run,
# from its start to its "done" marker.  A snapshot has what the daemon has
# read up to its moment; the fast lane's pump copies a ring every few ms of
# its own time: on a loaded machine the last markers of a process that just
# exited may come a snapshot later.
demo_done() {
	snapshot "$1"
	grep -q 'BPF string: "markers-demo done: [0-9]* rounds"' "$T/$1.txt"
}
snapshot_demo() {
	wait_until 60 demo_done "$1" ||
		die "snapshot $1: no 'markers-demo done' string marker in 60 s" -- "$T/$1.txt"
	grep -q "BPF string: \"markers-demo start: $2 s of work\"" "$T/$1.txt" ||
		die "snapshot $1: no 'markers-demo start: $2 s' string marker" -- "$T/$1.txt"
}

step "session create, workload, snapshot"
ct perfmark session create sys -a --ring 16M >"$T/create.out" 2>&1 || die "session create failed" -- "$T/create.out"
[ -d "$BPFFS/perfmark/sys" ] && echo "(pins in the container's bpffs: $(ls "$BPFFS/perfmark/sys" | tr '\n' ' '))"
demo_as_user 0.5 || fail "markers-demo failed in the container"
snapshot_demo s1 0.5
printfs=$(grep -c 'perfmark:printf:' "$T/s1.txt")
uevents=$(grep -c 'perfmark:uevent:' "$T/s1.txt")
samples=$(grep -c 'cpu-clock:\|cycles:' "$T/s1.txt")
grep -q 'BPF string: "round 0: checksum' "$T/s1.txt" || die "no 'round 0' marker" -- "$T/s1.txt"
[ "$uevents" -ge 6 ] || die "only $uevents perfmark:uevent markers" -- "$T/s1.txt"
[ "$samples" -ge 100 ] || die "only $samples samples" -- "$T/s1.txt"
ok "snapshot read by perf inside: $printfs printf markers, $uevents typed markers, $samples samples"
ct test -f /run/perfmark/rings/sys.ring || fail "the ring is not in /run/perfmark/rings"
# markers of one markers-demo run in a snapshot: "RUN PID COUNT" -> count
demo_pid() {       # NAME SECS: the pid of the markers-demo run of SECS in snapshot NAME
	grep -B8 "BPF string: \"markers-demo start: $2 s of work\"" "$T/$1.txt" |
		awk '/perfmark:printf/ { print $2 }' | tail -n 1
}
markers_of() {     # NAME PID
	grep -c "^ *markers-demo *$2 .*perfmark:\(printf\|uevent\)" "$T/$1.txt"
}
run1=$(demo_pid s1 0.5)
n1=$(markers_of s1 "$run1")
[ -n "$run1" ] && [ "$n1" -gt 0 ] || fail "cannot find the markers of the first markers-demo run"

# File sessions: a user's in its home, root's in /srv (the sandbox must leave
# both writable, also for the daemon that reopens them after a restart).
ct_sh 'runuser -u pmuser -- mkdir -p /home/pmuser/traces && mkdir -p /srv/traces' || fail "mkdir traces"
ct runuser -u pmuser -- perfmark session create uf -a -F 100 --output /home/pmuser/traces --rotate 1s \
	>"$T/uf.out" 2>&1 || die "a user's file session in its home failed" -- "$T/uf.out"
ct perfmark session create rf -a -F 100 --no-markers --output /srv/traces --rotate 1s \
	>"$T/rf.out" 2>&1 || die "root's file session in /srv failed" -- "$T/rf.out"
files_of() { ct_sh "ls $1 2>/dev/null" | grep -c '\.perf\.data$'; }
more_files() { [ "$(files_of "$1")" -gt "$2" ]; }
wait_files() { wait_until 60 more_files "$1" "$2"; }   # DIR N: until DIR holds more than N perf.data files
newer_file() { [ -n "$(ct find "$1" -name '*.perf.data' -newer /run/pm-restarted)" ]; }
wait_newer() { wait_until 60 newer_file "$1"; }   # DIR: until a perf.data file in DIR was written after the restart
wait_files /home/pmuser/traces 0 || fail "no file in /home/pmuser/traces"
wait_files /srv/traces 0 || fail "no file in /srv/traces"
owner=$(ct_sh 'stat -c %U /home/pmuser/traces/uf-000000.perf.data')
[ "$owner" = pmuser ] || fail "the user's session file belongs to '$owner'"
ok "file sessions write into /home/pmuser/traces (as pmuser) and /srv/traces"
# pids are the container's (the daemon's pid namespace), so perf inside names
# the process and its functions
grep -q '^ *markers-demo .*perfmark:printf' "$T/s1.txt" || {
	grep 'perfmark:printf' "$T/s1.txt" | head -5
	fail "markers not attributed to markers-demo inside the container (pid namespace)"
}
grep -q 'parse_input\|render_frame' "$T/s1.txt" ||
	fail "samples of markers-demo not symbolized inside the container (pid namespace)"
ok "samples and markers carry the container's pids: comm and symbols resolve inside"

# ---- restart ---------------------------------------------------------------------
step "systemctl restart perfmarkd"
ct systemctl restart perfmarkd || fail "restart failed"
ct touch /run/pm-restarted
[ "$(ct systemctl is-active perfmarkd.service)" = active ] || fail "not active after restart"
pid2=$(ct systemctl show -p MainPID --value perfmarkd.service)
[ "$pid2" != "$pid1" ] || fail "restart kept main pid $pid1"
# READY=1 comes before the rings are taken over: the session is "starting" until then
sys_running() { ct perfmark session list >"$T/$1" 2>&1 && grep -Eq '^sys[[:space:]]+running' "$T/$1"; }
wait_until 120 sys_running list2.out || die "session sys not listed as running after restart" -- "$T/list2.out"
demo_as_user 0.4 || fail "markers-demo failed"
snapshot_demo s2 0.4
wait_newer /home/pmuser/traces ||
	fail "the user's file session wrote nothing after the restart ($(ct perfmark session list | grep '^uf'))"
wait_newer /srv/traces ||
	fail "root's file session in /srv wrote nothing after the restart ($(ct perfmark session list | grep '^rf'))"
ok "after restart (pid $pid1 -> $pid2) the sessions are listed, running, and collect; file sessions go on writing"
n=$(markers_of s2 "$run1")
[ "$n" -eq "$n1" ] || fail "after systemctl restart the ring holds $n of the $n1 markers of the first run (pid $run1)"
grep -q 'ring taken over' <(ct journalctl --no-pager -u perfmarkd.service) ||
	fail "the restarted daemon did not take the ring over"
ok "systemctl restart: the ring kept all $n1 markers of the run before it (persistent ring in /run/perfmark)"
ct runuser -u pmuser -- perfmark session delete uf >"$T/del-uf.out" 2>&1 || die "delete uf failed" -- "$T/del-uf.out"
ct perfmark session delete rf >"$T/del-rf.out" 2>&1 || die "delete rf failed" -- "$T/del-rf.out"

# ---- stopped daemon, socket activation -------------------------------------------
step "stop service and socket; collect with no daemon; socket activation"
ct systemctl stop perfmarkd.socket perfmarkd.service 2>"$T/stop.err" || fail "stop failed: $(cat "$T/stop.err")"
for u in perfmarkd.service perfmarkd.socket; do
	s=$(ct systemctl is-active "$u")
	[ "$s" = inactive ] || fail "$u is '$s' after stop"
done
ct test -e /run/perfmark/perfmarkd.sock && fail "socket file left after the socket unit stopped"
ct test -d /run/perfmark || fail "/run/perfmark removed (RuntimeDirectoryPreserve=)"
[ -d "$BPFFS/perfmark/sys" ] || fail "the session's pins are gone while the daemon is down"
demo_as_user 0.2 || fail "markers-demo failed"
ct systemctl start perfmarkd.socket || fail "start perfmarkd.socket failed"
s=$(ct systemctl is-active perfmarkd.service)
[ "$s" = inactive ] || fail "perfmarkd.service is '$s' before any connection"
ct perfmark session list >"$T/list3.out" 2>&1 || die "session list through socket activation failed" -- "$T/list3.out"
wait_until 120 sys_running list3.out || die "session sys not listed after activation" -- "$T/list3.out"
s=$(ct systemctl is-active perfmarkd.service)
[ "$s" = active ] || fail "perfmarkd.service is '$s' after a client connected to the socket"
snapshot_demo s3 0.2
ok "socket activation starts the daemon; markers emitted while it was down were kept by the pinned BPF side"

# ---- watchdog, restarts ------------------------------------------------------------
wd=$(ct systemctl show -p WatchdogTimestampMonotonic --value perfmarkd.service)
[ "${wd:-0}" -gt 0 ] || fail "systemd never got WATCHDOG=1 from perfmarkd"
nr=$(ct systemctl show -p NRestarts --value perfmarkd.service)
[ "${nr:-0}" -eq 0 ] || fail "systemd restarted perfmarkd $nr times"
ct journalctl --no-pager -u perfmarkd.service >"$T/journal.txt" 2>&1
grep -qi 'watchdog timeout' "$T/journal.txt" && die "watchdog timeout in the journal" -- "$T/journal.txt"
ok "watchdog pings arrive, no restarts by systemd"

# ---- crash: Restart=on-failure -------------------------------------------------------
run2=$(demo_pid s3 0.4)
run3=$(demo_pid s3 0.2)
before=""
for r in "$run1" "$run2" "$run3"; do before="$before $(markers_of s3 "$r")"; done
# A process writes a marker every millisecond (600, about 0.7 s) and dies
# while the daemon is down: what waited in its fast-lane ring when the daemon
# was killed, and what it wrote there until it found the daemon silent, is
# held only by the ring's memfd, which the daemon had put in systemd's fd store.
ct mkdir -p /run/systemd/system/perfmarkd.service.d || fail "mkdir drop-in"
ct_sh 'printf "[Service]\nRestartSec=3s\n" >/run/systemd/system/perfmarkd.service.d/crash.conf' || fail "drop-in"
ct systemctl daemon-reload || fail "daemon-reload"
pid3=$(ct systemctl show -p MainPID --value perfmarkd.service)
ct_sh 'PROG_EMIT_EVERY=100 prog-emit 600 crash 1 >/tmp/emit.out' &
emit=$!
# killed while it writes (600 markers 1 ms apart): once it has written 100
emitting() { ct_sh 'grep -q "^at 100$" /tmp/emit.out'; }
wait_until 60 emitting || fail "prog-emit did not get to 100 markers"
ct kill -KILL "$pid3" || fail "cannot kill perfmarkd ($pid3)"
wait "$emit" || fail "prog-emit failed in the container"
stored=$(ct systemctl show -p NFileDescriptorStore --value perfmarkd.service)
s=$(ct systemctl is-active perfmarkd.service)
[ "$s" != active ] || fail "perfmarkd was back before prog-emit exited ($s): the step tests nothing"
ct_sh 'grep -q "^pid " /tmp/emit.out' || fail "prog-emit printed no pid"
restarted() {
	pid4=$(ct systemctl show -p MainPID --value perfmarkd.service)
	[ "${pid4:-0}" -gt 0 ] && [ "$pid4" != "$pid3" ] && [ "$(ct systemctl is-active perfmarkd.service)" = active ]
}
wait_until 60 restarted
[ "${pid4:-0}" -gt 0 ] && [ "$pid4" != "$pid3" ] || fail "systemd did not restart perfmarkd after SIGKILL"
nr=$(ct systemctl show -p NRestarts --value perfmarkd.service)
[ "${nr:-0}" -eq 1 ] || fail "NRestarts is '$nr' after one crash"
ct perfmark session list >"$T/list5.out" 2>&1 || die "session list after the crash failed" -- "$T/list5.out"
wait_until 120 sys_running list5.out || die "session sys not running after the crash restart" -- "$T/list5.out"
ok "a killed daemon is restarted by systemd (pid $pid3 -> $pid4) and takes its session back"
snapshot s5
after=""
for r in "$run1" "$run2" "$run3"; do after="$after $(markers_of s5 "$r")"; done
[ "$after" = "$before" ] || fail "after kill -9 the ring holds markers$after of the three runs, before it:$before"
ok "kill -9 under systemd: the ring kept the markers of all three runs ($before)"
# the restarted daemon reads the kept ring at once (its pump may come a snapshot later)
crash_all() {
	snapshot s5
	grep -o 'BPF string: "crash seq=[0-9]*"' "$T/s5.txt" >"$T/crash.seq"
	[ "$(sort -u "$T/crash.seq" | wc -l)" -ge 600 ]
}
wait_until 60 crash_all
got=$(sort -u "$T/crash.seq" | wc -l)
all=$(wc -l <"$T/crash.seq")
[ "$got" -eq 600 ] && [ "$all" -eq 600 ] ||
	fail "a process that exited while perfmarkd was down: $got of its 600 markers after the restart ($all with repeats; the fd store held ${stored:-?} fds while the daemon was down)"
ct journalctl --no-pager -u perfmarkd.service | grep -m 1 'kept ring' | sed 's/^/    /'
ok "a process that died while the daemon was down: all 600 markers, once each (its ring was kept in the fd store)"
# fdstore_until OP VALUE: until the fds in perfmarkd's fd store ($n)
# compare so with VALUE (test's -eq, -ge ...), up to 60 s
fdstore_is() {
	n=$(ct systemctl show -p NFileDescriptorStore --value perfmarkd.service)
	[ "${n:-0}" "$1" "$2" ]
}
fdstore_until() { wait_until 60 fdstore_is "$1" "$2"; }
# read to its end, the ring left the store
fdstore_until -eq 0 || fail "the fd store still holds $n fds after the ring was read to its end"
ok "the dead process's ring left the fd store once read"
# one user's 300 processes take at most 256 places in the store
ct_sh 'install -o pmuser -m 755 /usr/local/bin/prog-emit /home/pmuser/prog-emit && mkdir -m 0777 /tmp/many &&
       runuser -u pmuser -- sh -c "for i in \$(seq 300); do /home/pmuser/prog-emit 30000 many 10 >/tmp/many/\$i & done"' ||
	fail "cannot start 300 prog-emit as pmuser"
fdstore_until -ge 256 || fail "the fd store holds $n fds, not the 256 of one user's limit"
# every one has written a marker (each registered its ring: 300 s of them, 10 ms
# apart), and the daemon has read what they wrote (a snapshot): none got a
# place beyond 256
all_emitting() { [ "$(ct_sh 'grep -l "^at 1$" /tmp/many/* | wc -l')" -eq 300 ]; }
wait_until 120 all_emitting || fail "the 300 prog-emit did not all write a marker"
snapshot many
n=$(ct systemctl show -p NFileDescriptorStore --value perfmarkd.service)
running=$(ct pgrep -c -u pmuser prog-emit)
ct pkill -u pmuser prog-emit
[ "$n" -eq 256 ] || fail "300 processes of one user ($running running) hold $n places in the fd store, want 256"
fdstore_until -eq 0 || fail "the fd store holds $n fds after the user's processes were killed"
ok "one user's 300 processes held 256 places in the fd store (its per-user limit), none once they were gone"
ct rm -f /run/systemd/system/perfmarkd.service.d/crash.conf

# ---- delete ------------------------------------------------------------------------
ct perfmark session delete sys >"$T/delete.out" 2>&1 || die "session delete failed" -- "$T/delete.out"
[ -e "$BPFFS/perfmark/sys" ] && fail "pins left after session delete: $(ls "$BPFFS/perfmark/sys")"
ct perfmark session list >"$T/list4.out" 2>&1
grep -Eq '^sys[[:space:]]' "$T/list4.out" && die "session sys still listed after delete" -- "$T/list4.out"
ok "session delete removes its pins"

echo "system test done in $((SECONDS - started))s"
