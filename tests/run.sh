#!/usr/bin/env bash
# Run every test: unit tests (normal and sanitizer builds), then the
# integration scripts tests/t-*.sh.  A script exits 0 (pass), 77 (skip, its
# last line the reason) or anything else (fail); a unit test's case that
# cannot run here prints "skipped: REASON" (skip_because in test-util.h).
# Every skip is listed with its reason and counted.  No test reads the
# terminal: stdin is /dev/null.
# The last two lines: "N skipped", then "N passed, N failed".
#
# STRESS=1: a CPU-bound process pinned on each CPU (taskset) for the whole
# run, killed at the end whatever happens: every test must pass on a
# loaded machine, as a CI runner is one.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
asan=${2:-}
[ -n "$asan" ] && asan=$(cd "$asan" && pwd) && export PERFMARK_ASAN_BUILD=$asan
export PERFMARK_BUILD=$build PERFMARK_SRC=$(dirname "$here")
logdir=$(mktemp -d /tmp/perfmark-tests.XXXXXX)
pass=0 fail=0 skip=0 failed=() skipped=()

hogs=()
stop_hogs() {
	local p
	for p in "${hogs[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	hogs=()
}
trap stop_hogs EXIT
trap 'stop_hogs; exit 130' INT TERM
# a test's safety net (not a measure): a loaded machine runs them 2-3 times slower
TEST_TIMEOUT=${TEST_TIMEOUT:-$([ "${STRESS:-0}" = 1 ] && echo 1800 || echo 600)}
if [ "${STRESS:-0}" = 1 ]; then
	command -v taskset >/dev/null || { echo "STRESS=1 needs taskset (util-linux)"; exit 1; }
	for cpu in $(seq 0 $(($(nproc) - 1))); do
		taskset -c "$cpu" bash -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
		hogs+=("$!")
	done
	echo "STRESS=1: a CPU hog pinned on each of $(nproc) CPUs (pids ${hogs[*]})"
fi

# pins of test daemons whose test died (an earlier run's timeout): gone
# before anything records (pins-lib.sh); each script sweeps again as it starts
. "$here/pins-lib.sh"
sweep_dead_test_pins

# the cases of a cmocka program that said "skipped: REASON", one "CASE: REASON" a line
unit_skips() {
	awk '/^\[ RUN      \] / { name = $4 } /^skipped: / { sub(/^skipped: /, ""); print name ": " $0 }' "$1"
}

run() {   # name, command...
	local name=$1; shift
	local log=$logdir/${name//\//_}.log start=$SECONDS rc s
	timeout -k 10 "$TEST_TIMEOUT" "$@" >"$log" 2>&1 </dev/null; rc=$?
	local took=$((SECONDS - start))
	case $rc in
	0)  pass=$((pass + 1)); echo "PASS $name (${took}s)"
	    while IFS= read -r s; do
		skip=$((skip + 1)); skipped+=("$name/$s"); echo "SKIP $name/$s"
	    done < <(unit_skips "$log");;
	77) skip=$((skip + 1)); s="$name: $(tail -n 1 "$log")"; skipped+=("$s"); echo "SKIP $s";;
	*)  fail=$((fail + 1)); failed+=("$name"); echo "FAIL $name (rc=$rc, ${took}s)"
	    sed 's/^/    | /' "$log" | tail -n 40;;
	esac
}

for t in "$build"/tests/test-*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	run "unit/$(basename "$t")" "$t"
done
if [ -n "$asan" ]; then
	for t in "$asan"/tests/test-*; do
		[ -f "$t" ] && [ -x "$t" ] || continue
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
			run "asan/$(basename "$t")" "$t"
	done
fi
for t in "$here"/t-*.sh; do
	[ -n "${TESTS:-}" ] && ! [[ $(basename "$t") == $TESTS ]] && continue
	run "$(basename "$t" .sh)" bash "$t"
done

echo "logs in $logdir"
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
for s in "${skipped[@]}"; do
	echo "skipped: $s"
done
echo "$skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
