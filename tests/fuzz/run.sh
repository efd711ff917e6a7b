#!/usr/bin/env bash
# make fuzz: run every libFuzzer target of a fuzz build for SECONDS each,
# at the lowest priority, one after the other (or JOBS at once).
#
#   tests/fuzz/run.sh BUILD_FUZZ SECONDS [TARGET...]
#
# NAME.options holds more libFuzzer flags for a target (max_len, dict).
# Seeds: tests/fuzz/corpus/NAME (read-only) and tests/fuzz/regress/NAME;
# what a run finds goes to $FUZZ_WORK/corpus/NAME (default BUILD_FUZZ/fuzz-work),
# crashes to $FUZZ_WORK/crashes/NAME-*: copy each one into
# tests/fuzz/regress/NAME/ once fixed, t-fuzz.sh replays them.
# Prints one line per target: execs, seconds, corpus size, crashes.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run.sh BUILD_FUZZ SECONDS [TARGET...]}" && pwd)
secs=${2:-60}
shift 2 || true
work=${FUZZ_WORK:-$build/fuzz-work}
mkdir -p "$work/crashes"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for t in "$build"/tests/fuzz/fuzz-*; do
		[ -f "$t" ] && [ -x "$t" ] && targets+=("$(basename "$t" | sed 's/^fuzz-//')")
	done
fi
[ ${#targets[@]} -gt 0 ] || { echo "no fuzz targets in $build/tests/fuzz (configure with -Dfuzz=true)"; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=0
printf '%-10s %14s %9s %8s %8s\n' target execs seconds corpus crashes
for name in "${targets[@]}"; do
	bin=$build/tests/fuzz/fuzz-$name
	corpus=$work/corpus/$name
	mkdir -p "$corpus" "$here/regress/$name"
	opts=(-max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
	      -artifact_prefix="$work/crashes/$name-")
	# NAME.options: more libFuzzer flags, @HERE@ standing for this directory
	[ -f "$here/$name.options" ] && read -ra extra <<<"$(sed "s|@HERE@|$here|g" "$here/$name.options")" &&
		opts+=("${extra[@]}")
	before=$(ls "$work/crashes" | grep -c "^$name-")
	start=$SECONDS
	nice -n 19 "$bin" "${opts[@]}" "$corpus" "$here/corpus/$name" "$here/regress/$name" \
		>"$work/$name.log" 2>&1
	rc=$?
	took=$((SECONDS - start))
	execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$work/$name.log" | tail -n 1)
	crashes=$(( $(ls "$work/crashes" | grep -c "^$name-") - before ))
	printf '%-10s %14s %9s %8s %8s\n' "$name" "${execs:-?}" "$took" "$(ls "$corpus" | wc -l)" "$crashes"
	if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
		failed=1
		grep -m 5 -E 'ERROR|CHECK failed|runtime error|SUMMARY' "$work/$name.log" | sed 's/^/    | /'
		echo "    | log: $work/$name.log"
	fi
done
exit $failed
