#!/usr/bin/env bash
# The probe site is a USDT probe (perfmark:uevent) that other tools attach
# to: bpftrace, attached system-wide by library path, sees every marker of
# markers-demo with its type and size, and raises the semaphore itself.
. "$(dirname "$0")/lib.sh"
need_root
command -v bpftrace >/dev/null || skip "bpftrace not installed (make check installs it)"
lib=$(readlink -f "$PERFMARK_BUILD/libperfmark.so.0")
demo=$PERFMARK_BUILD/examples/markers-demo

bpftrace -l "usdt:$lib:*" 2>/dev/null | grep -qx "usdt:$lib:perfmark:uevent" ||
	die "bpftrace does not list usdt:$lib:perfmark:uevent"
ok "bpftrace lists the probe"

# the semaphore is off until something attaches (another tracer on this
# machine, say a test running beside this one, may hold it for a while)
untraced() {
	"$demo" 0.1 >"$T/untraced.out" 2>&1 || die "markers-demo failed"
	! grep -q ', traced,' "$T/untraced.out"
}
wait_until 60 untraced ||
	die "the semaphore stays raised with nothing of ours attached (another tracer for 60 s?)" -- "$T/untraced.out"
ok "the semaphore is off while nothing is attached"

# a marker of prog-children's kind 7 says when the probe is in place; the
# counts are printed when it is stopped (SIGINT)
probe_type=$((65836 + 7))
bpftrace -e "usdt:$lib:perfmark:uevent /arg0 == $probe_type/ { printf(\"ready\\n\"); }
	     usdt:$lib:perfmark:uevent /arg0 != $probe_type/ { @n[arg0] = count(); @size[arg0] = sum(arg2); }" \
	>"$T/bt.out" 2>&1 &
bt=$!
_bg_pids+=("$bt")
bt_ready() { "$PERFMARK_BUILD/tests/prog-children" emit 1 7 >/dev/null 2>&1; grep -q '^ready' "$T/bt.out"; }
wait_until 60 bt_ready || die "bpftrace's probe never fired" -- "$T/bt.out"
"$demo" 0.3 >"$T/demo.out" 2>&1 || die "markers-demo failed"
kill -INT "$bt"
wait "$bt"
rounds=$(sed -n 's/.*: \([0-9]*\) rounds,.*/\1/p' "$T/demo.out")
[ -n "$rounds" ] || die "no round count from markers-demo" -- "$T/demo.out"
grep -q ', traced,' "$T/demo.out" || die "bpftrace's attach did not raise the semaphore" -- "$T/demo.out"
count() { sed -n "s/^@n\\[$1\\]: \\([0-9]*\\)/\\1/p" "$T/bt.out"; }
[ "$(count 1)" = $((2 * rounds)) ] && [ "$(count 2)" = $((2 * rounds)) ] ||
	die "range markers: begin $(count 1), end $(count 2), want $((2 * rounds)) each" -- "$T/bt.out"
[ "$(count 3)" = "$rounds" ] && [ "$(count 65537)" = "$rounds" ] ||
	die "counter/app markers: $(count 3), $(count 65537), want $rounds each" -- "$T/bt.out"
# the app event's payload is a 16-byte struct
[ "$(sed -n 's/^@size\[65537\]: \([0-9]*\)/\1/p' "$T/bt.out")" = $((16 * rounds)) ] ||
	die "app marker sizes wrong" -- "$T/bt.out"
ok "bpftrace saw all markers of $rounds rounds with their types and sizes"
