#!/usr/bin/env bash
# Errors: exactly one stderr line starting "perfmark: ", exit status 1, and no
# valid-looking file left at the output path (absent, or untouched).
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_bpffs
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"

fails=0
# expect_error NAME OUTPUT-PATH|- CMD... : run CMD, check rc 1 and one
# "perfmark: " line; OUTPUT-PATH must be absent afterwards (or, when it held
# the sentinel before, still hold it).
expect_error() {
	local name=$1 out=$2; shift 2
	local err=$T/err.$name before= rc
	[ "$out" != - ] && [ -e "$out" ] && before=$(md5sum <"$out")
	timeout -k 5 30 "$@" >"$T/out.$name" 2>"$err" </dev/null
	rc=$?
	local lines pm
	lines=$(wc -l <"$err")
	pm=$(grep -c '^perfmark: ' "$err")
	if [ "$rc" -ne 1 ]; then
		echo "FAIL [$name]: exit status $rc, want 1: $*"; fails=$((fails + 1))
	elif [ "$lines" -ne 1 ] || [ "$pm" -ne 1 ]; then
		echo "FAIL [$name]: want exactly one 'perfmark: ' line on stderr, got $lines lines: $*"
		fails=$((fails + 1))
	elif [ "$out" != - ] && [ -z "$before" ] && [ -e "$out" ]; then
		echo "FAIL [$name]: left a file at $out ($(stat -c %s "$out") bytes): $*"; fails=$((fails + 1))
	elif [ "$out" != - ] && [ -n "$before" ] && [ "$(md5sum <"$out" 2>/dev/null)" != "$before" ]; then
		echo "FAIL [$name]: changed the existing file $out: $*"; fails=$((fails + 1))
	else
		echo "ok [$name]: $(head -n 1 "$err")"
		return 0
	fi
	sed 's/^/    stderr| /' "$err" | head -n 20
}

R="$PERFMARK record"
expect_error event     "$T/e.data" $R -e foo -o "$T/e.data" -- true
echo sentinel >"$T/s.data"
expect_error event-keep "$T/s.data" $R -e foo -o "$T/s.data" -- true
expect_error freq-abc  "$T/f1.data" $R -F abc -o "$T/f1.data" -- true
expect_error freq-0    "$T/f2.data" $R -F 0 -o "$T/f2.data" -- true
expect_error pid       "$T/p.data" $R -p 999999 -o "$T/p.data" --duration 1
expect_error outdir    - $R -o /nonexistent/dir/f -- true
expect_error cmd       "$T/c.data" $R -o "$T/c.data" -- /no/such/cmd
mkdir -m 777 "$T/nobody"
if command -v setpriv >/dev/null; then
	expect_error not-root "$T/nobody/n.data" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PERFMARK" record -o "$T/nobody/n.data" -- true
else
	expect_error not-root "$T/nobody/n.data" su nobody -s /bin/sh -c \
		"$PERFMARK record -o $T/nobody/n.data -- true"
fi

# perfmark script on broken input
perf record -q --no-buildid -e cpu-clock -g -o "$T/good.data" -- "$PROGS/prog-spin" 0.5 2>/dev/null
[ -s "$T/good.data" ] || die "could not make a reference file with perf record"
: >"$T/empty.data"
head -c 100 "$T/good.data" >"$T/trunc100.data"
head -c $(( $(stat -c %s "$T/good.data") / 2 )) "$T/good.data" >"$T/trunchalf.data"
S="$PERFMARK script"
expect_error script-empty   - $S -i "$T/empty.data"
expect_error script-trunc   - $S -i "$T/trunc100.data"
expect_error script-half    - $S -i "$T/trunchalf.data"
expect_error script-passwd  - $S -i /etc/passwd
expect_error script-missing - $S -i "$T/no-such-file.data"
expect_error script-stdin-passwd - sh -c "$S -i - </etc/passwd"

[ "$fails" -eq 0 ] || die "$fails error case(s) misbehave"
echo "t-record-errors: all checks passed"
