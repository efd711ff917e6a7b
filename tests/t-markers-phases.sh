#!/usr/bin/env bash
# Samples and markers share one timeline: prog-markers phases emits marker
# "phase A", spins ~300 ms in phase_one, "phase B", ~300 ms in phase_two,
# "phase C".  Samples timed between A and B must be (> 90 %) in phase_one,
# between B and C in phase_two; checked with perfmark script --json and with
# stock perf script --ns.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_markers

F=$T/phases.data
"$PERFMARK" record -F 4000 -o "$F" -- "$P" phases 300 >"$T/prog.out" 2>"$T/rec.err"
rc=$?
[ "$rc" -eq 0 ] || die "record exited $rc" -- "$T/rec.err" "$T/prog.out"
grep -qx 'phases rc 0' "$T/prog.out" || die "perf_printf returned an error" -- "$T/prog.out"

# Input lines: "M TIME TEXT" for markers, "S TIME SYM" for samples, time order.
# Prints "nAB inAB nBC inBC" and one "marker" line per marker seen.
windows() {
	awk '
	$1 == "M" { m[$3] = $2; print "marker", $3, $2 >"/dev/stderr"; next }
	$1 == "S" { t[++n] = $2; s[n] = $3 }
	END {
		if (!("A" in m) || !("B" in m) || !("C" in m)) { print "missing markers"; exit 1 }
		for (i = 1; i <= n; i++) {
			if (t[i] > m["A"] && t[i] < m["B"]) { ab++; if (s[i] == "phase_one") in1++ }
			if (t[i] > m["B"] && t[i] < m["C"]) { bc++; if (s[i] == "phase_two") in2++ }
		}
		printf "%d %d %d %d\n", ab, in1, bc, in2
	}'
}

check() {   # reader-name file-of-M/S-lines
	local name=$1 res ab in1 bc in2
	res=$(windows <"$2" 2>"$T/$name.markers")
	read -r ab in1 bc in2 <<<"$res"
	[ "$ab" != missing ] || die "$name: markers A, B, C not all found" -- "$T/$name.markers" "$2"
	[ "$(wc -l <"$T/$name.markers")" -eq 3 ] || die "$name: want exactly 3 phase markers" -- "$T/$name.markers"
	[ "${ab:-0}" -ge 200 ] && [ "${bc:-0}" -ge 200 ] ||
		die "$name: too few samples between the markers (A-B $ab, B-C $bc; ~1200 expected at 4000 Hz)" -- "$2"
	fcmp "$in1 / $ab > 0.9" || die "$name: only $in1 of $ab samples between A and B are in phase_one" -- "$2"
	fcmp "$in2 / $bc > 0.9" || die "$name: only $in2 of $bc samples between B and C are in phase_two" -- "$2"
	ok "$name: A-B $in1/$ab samples in phase_one, B-C $in2/$bc in phase_two"
}

# perfmark script --json (time in ns)
"$PERFMARK" script -i "$F" --json 2>"$T/pm.err" | awk '
	function num(k,   v) { if (!match($0, "\"" k "\":[0-9]+")) return ""
		v = substr($0, RSTART, RLENGTH); sub(/.*:/, "", v); return v }
	/"event":"perfmark:printf"/ && match($0, /"text":"phase [ABC]"/) {
		w = substr($0, RSTART + RLENGTH - 2, 1); print "M", num("time"), w; next }
	/"event":"perfmark:/ { next }
	/"sym":"/ { match($0, /"sym":"[^"]*"/); sym = substr($0, RSTART + 7, RLENGTH - 8); print "S", num("time"), sym }
' >"$T/pm.ms"
check perfmark "$T/pm.ms"

# stock perf script --ns: "SEC.NSEC:" times; a marker's text is on its BPF string line
perf script --ns -i "$F" -F comm,pid,tid,time,event,ip,sym,bpf-output 2>/dev/null | awk '
	/^ *BPF string: "phase [ABC]"/ { if (pend != "") print "M", pend, substr($0, index($0, "\"") + 7, 1); pend = ""; next }
	/^ *(BPF|[0-9a-f]+:)/ { next }
	{
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { tm = $i; break }
		sub(/:$/, "", tm); split(tm, p, "."); t = p[1] * 1000000000 + p[2]
		if ($0 ~ / perfmark:printf: /) { pend = sprintf("%.0f", t); next }
		pend = ""
		if ($0 ~ / cpu-clock: | cycles: /) {
			for (i = 1; i <= NF; i++) if ($i ~ /:$/ && ($i == "cpu-clock:" || $i == "cycles:")) break
			sym = $(i + 2); sub(/\+0x[0-9a-f]+$/, "", sym)
			printf "S %.0f %s\n", t, sym
		}
	}' >"$T/perf.ms"
check perf "$T/perf.ms"
echo "t-markers-phases: all checks passed"
