#!/usr/bin/env bash
# The libFuzzer targets of tests/fuzz (a fuzz build: clang, ASan + UBSan):
# every seed and every input that once crashed a target (tests/fuzz/regress)
# replayed, then each target fuzzed FUZZ_SECONDS (default 10).  The long
# campaign is `make fuzz SECONDS=N`.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || skip "clang not installed"
fb=${PERFMARK_FUZZ_BUILD:-$PERFMARK_SRC/build-fuzz}
case $fb in /*) ;; *) fb=$PERFMARK_SRC/$fb;; esac
if [ ! -f "$fb/build.ninja" ]; then
	CC=clang meson setup "$fb" "$PERFMARK_SRC" -Dfuzz=true -Db_sanitize=address,undefined \
		-Db_lundef=false >"$T/setup.log" 2>&1 || die "cannot set up the fuzz build" -- "$T/setup.log"
fi
ninja -C "$fb" fuzz >"$T/build.log" 2>&1 || die "fuzz targets do not build" -- "$T/build.log"
src=$PERFMARK_SRC/tests/fuzz
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
n=0
for bin in "$fb"/tests/fuzz/fuzz-*; do
	[ -f "$bin" ] && [ -x "$bin" ] || continue
	name=$(basename "$bin" | sed 's/^fuzz-//')
	dirs=()
	for d in "$src/corpus/$name" "$src/regress/$name"; do
		[ -d "$d" ] && dirs+=("$d")
	done
	[ ${#dirs[@]} -gt 0 ] || die "target $name has no seeds in $src/corpus/$name"
	"$bin" -runs=0 "${dirs[@]}" >"$T/replay-$name.log" 2>&1 ||
		die "fuzz-$name fails on a seed or a regression input" -- "$T/replay-$name.log"
	ok "fuzz-$name: $(ls "${dirs[@]}" | grep -vc ':$') seeds and regressions replay clean"
	n=$((n + 1))
done
[ "$n" -ge 3 ] || die "only $n fuzz targets built in $fb"
FUZZ_WORK=$T/work "$src/run.sh" "$fb" "${FUZZ_SECONDS:-10}" | tee "$T/run.txt" ||
	die "the short fuzz run found a problem" -- "$T/run.txt"
ok "every target fuzzed ${FUZZ_SECONDS:-10} s clean"
