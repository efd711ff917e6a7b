#!/usr/bin/env bash
# perfmark record -g on prog-ratio: stock perf must see work_a and work_b in a
# 3:1 ratio, call chains up to main, a libc symbol and a kernel symbol, the
# event name, the header strings; hotspot's perfparser must count the samples;
# the cycles -> cpu-clock fallback notice appears exactly once.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_perfmark; need_bpffs

F=$T/ratio.data
# Default event (cycles, falling back to cpu-clock here), default 4000 Hz.
pm_record -g -o "$F" -- "$PROGS/prog-ratio" 2 >"$T/rec.out" 2>"$T/rec.err"
rc=$?
[ "$rc" -eq 0 ] || die "record exited $rc" -- "$T/rec.err"
[ -s "$F" ] || die "no output file $F" -- "$T/rec.err"

# --- overhead ratio ---------------------------------------------------------
report_self "$F" >"$T/self"
a=$(pct_of "$T/self" work_a)
b=$(pct_of "$T/self" work_b)
fcmp "$a > 0 && $b > 0" || die "work_a ($a%) / work_b ($b%) missing from perf report" -- "$T/self"
fcmp "$a / $b >= 2.25 && $a / $b <= 3.75" ||
	die "work_a:work_b = $a:$b, want 3:1 +-25%" -- "$T/self"
ok "work_a $a% work_b $b% (ratio $(awk "BEGIN{printf \"%.2f\", $a/$b}"))"

# Enough samples: ~2 s of CPU at 4000 Hz is ~8000; accept half of that.
n=$(perf report -i "$F" --stdio 2>/dev/null | sed -n "s/^# Samples: \([0-9.]*\)\([KM]\?\) of event.*/\1 \2/p" | head -n 1)
[ -n "$n" ] || die "perf report prints no '# Samples:' line"
ns=$(awk -v n="$n" 'BEGIN { split(n, p, " "); m = p[2] == "K" ? 1000 : p[2] == "M" ? 1e6 : 1; print int(p[1] * m) }')
[ "$ns" -ge 4000 ] || die "only $ns samples for ~2 s of CPU at 4000 Hz"
ok "$ns samples"

# --- call chains --------------------------------------------------------------
perf script -i "$F" -F comm,pid,tid,ip,sym,dso 2>/dev/null >"$T/script"
awk '
	function done() {
		if (nf == 0) return
		if (leaf == "work_a" || leaf == "work_b") { user++; if (hasmain) umain++ }
		if (leafdso == "[kernel.kallsyms]" && hasmain) kmain++
		nf = 0; hasmain = 0
	}
	/^[^\t ]/ || /^ *[^ \t].*[0-9]+\/[0-9]+ *$/ { done(); next }
	/^$/ { done(); next }
	/^\t/ {
		nf++
		sym = $2; dso = $NF; gsub(/[()]/, "", dso)
		if (nf == 1) { leaf = sym; leafdso = dso }
		if (sym == "main") hasmain = 1
	}
	END { done(); printf "%d %d %d\n", user, umain, kmain }
' "$T/script" >"$T/chains"
read -r user umain kmain <"$T/chains"
[ "${user:-0}" -gt 0 ] || die "perf script shows no work_a/work_b samples" -- "$T/script"
fcmp "$umain / $user >= 0.9" ||
	die "only $umain of $user work_a/work_b samples have main in their call chain" -- "$T/script"
ok "$umain/$user work_a/work_b call chains reach main"
[ "${kmain:-0}" -gt 0 ] ||
	die "no kernel-leaf sample whose call chain continues into user space up to main" -- "$T/script"
ok "$kmain kernel samples with chains through to main"
perf report -i "$F" --stdio --no-children -g caller --sort sym 2>/dev/null >"$T/caller"
grep -A4 '\] work_a$' "$T/caller" | grep -qw main ||
	die "perf report -g caller: work_a's chain does not show main" -- "$T/caller"

# --- shared library and kernel symbols ----------------------------------------
perf report -i "$F" --stdio --no-children --sort dso,sym -g none 2>/dev/null >"$T/dsosym"
lib=$(awk '/^ *[0-9.]+%/ && $2 ~ /^lib(c|m)\.so/ && $3 == "[.]" && $4 !~ /^0x/ { print $4; exit }' "$T/dsosym")
[ -n "$lib" ] || die "no named libc/libm symbol in perf report" -- "$T/dsosym"
ok "shared-library symbol: $lib"
kern=$(awk '/^ *[0-9.]+%/ && $2 == "[kernel.kallsyms]" && $3 == "[k]" && $4 !~ /^0x/ { print $4; exit }' "$T/dsosym")
[ -n "$kern" ] || die "no named [kernel.kallsyms] symbol in perf report" -- "$T/dsosym"
ok "kernel symbol: $kern"

# --- event name, header -------------------------------------------------------
if have_hw_cycles; then want=cycles; else want=cpu-clock; fi
perf evlist -v -i "$F" >"$T/evlist" 2>&1
grep -q "^$want[:,]\|^$want\$" "$T/evlist" || die "perf evlist does not list $want" -- "$T/evlist"
ok "evlist lists $want"
perf report --header-only -i "$F" >"$T/header" 2>&1
for k in 'hostname' 'os release' 'cmdline'; do
	grep -q "^# $k : ." "$T/header" || die "header lacks '$k'" -- "$T/header"
done
grep -q "^# hostname : $(hostname)\$" "$T/header" || die "header hostname is not $(hostname)" -- "$T/header"
grep -q "^# os release : $(uname -r)\$" "$T/header" || die "header os release is not $(uname -r)" -- "$T/header"
grep -q '^# cmdline : .*prog-ratio' "$T/header" || die "header cmdline does not name prog-ratio" -- "$T/header"
ok "header strings"

# --- an independent reader ----------------------------------------------------
if [ -x "$PERFPARSER" ]; then
	"$PERFPARSER" --input "$F" --print-stats >"$T/pp" 2>&1
	pn=$(sed -n 's/^samples: \([0-9]*\)$/\1/p' "$T/pp" | head -n 1)
	[ "${pn:-0}" -gt 0 ] || die "hotspot-perfparser counts no samples" -- "$T/pp"
	grep -q '^samples time violations: 0$' "$T/pp" ||
		die "hotspot-perfparser reports samples out of time order" -- "$T/pp"
	ok "perfparser: $pn samples, in time order"
else
	die "$PERFPARSER missing: the independent reader is part of the check (make check installs hotspot)"
fi

# --- the cycles fallback notice ------------------------------------------------
if [ "$PM_RECORDER" != perf ]; then
	nl=$(grep -ci 'cpu-clock' "$T/rec.err")
	if [ "$want" = cpu-clock ]; then
		[ "$nl" -eq 1 ] || die "want exactly one cycles->cpu-clock notice on stderr, got $nl" -- "$T/rec.err"
		grep -i 'cpu-clock' "$T/rec.err" | grep -qi cycles ||
			die "the fallback notice does not mention cycles" -- "$T/rec.err"
		ok "one fallback notice: $(grep -i cpu-clock "$T/rec.err")"
	else
		[ "$nl" -eq 0 ] || die "cycles is supported here, yet a cpu-clock notice was printed" -- "$T/rec.err"
	fi
fi
echo "t-record-ratio: all checks passed"
