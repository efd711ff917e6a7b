#!/usr/bin/env bash
# record -e cpu-clock:u / :k end to end: the attr stock perf reads carries
# the modifier (name and exclude bits), and every sample's ip is on the
# side asked for, on a workload that spends most of its time in the kernel
# (dd of one-byte blocks) and some in user space.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_bpffs
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"

sides() {   # "user N kernel M" of a recording's sample ips
	perf script -i "$1" -F ip 2>/dev/null | python3 -c '
import sys
u = k = 0
for l in sys.stdin:
    l = l.strip()
    if l:
        if int(l, 16) >= 1 << 47: k += 1
        else: u += 1
print("user", u, "kernel", k)'
}
WL=(dd if=/dev/zero of=/dev/null bs=1 count=300000)
for mod in u k; do
	f=$T/$mod.data
	$PERFMARK record -e cpu-clock:$mod -o "$f" -- "${WL[@]}" 2>"$T/$mod.err" ||
		die "record -e cpu-clock:$mod failed" -- "$T/$mod.err"
	perf evlist -v -i "$f" >"$T/$mod.evlist" 2>/dev/null
	grep -q "^cpu-clock:$mod: " "$T/$mod.evlist" || die "no event cpu-clock:$mod" -- "$T/$mod.evlist"
	want=$([ $mod = u ] && echo exclude_kernel || echo exclude_user)
	grep "^cpu-clock:$mod: " "$T/$mod.evlist" | grep -q "$want: 1" || die "cpu-clock:$mod without $want" -- "$T/$mod.evlist"
	read -r _ u _ k <<<"$(sides "$f")"
	echo "cpu-clock:$mod: user $u kernel $k"
	if [ $mod = u ]; then
		[ "$u" -gt 0 ] && [ "$k" -eq 0 ] || die "cpu-clock:u: $k samples in the kernel ($u in user space)"
	else
		[ "$k" -gt 0 ] && [ "$u" -eq 0 ] || die "cpu-clock:k: $u samples in user space ($k in the kernel)"
	fi
done
ok "cpu-clock:u samples user space only, cpu-clock:k the kernel only"
