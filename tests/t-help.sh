#!/usr/bin/env bash
# --help of every command and session verb: exit 0 on stdout, a usage line,
# every option with what it does (the spellings of INTERFACE.md, checked by
# name here, not taken from the table that prints them), and the defaults;
# each spelling shown is also taken.  `perfmark --help` lists the commands.
# record -v says perfmark's summary without libbpf's debug lines; -vv adds them.
. "$(dirname "$0")/lib.sh"
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"

# help CMD... : its --help into $T/help, checked for the usage line and --help itself
help() {
	"$PERFMARK" "$@" --help >"$T/help" 2>"$T/help.err" || die "perfmark $* --help failed" -- "$T/help.err"
	[ ! -s "$T/help.err" ] || die "perfmark $* --help wrote to stderr" -- "$T/help.err"
	grep -q "^usage: perfmark $*" "$T/help" || die "perfmark $* --help: no usage line" -- "$T/help"
	grep -q -- '^  -h, --help  ' "$T/help" || die "perfmark $* --help does not list --help" -- "$T/help"
	awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$T/help" || die "perfmark $* --help: lines over 80 columns" -- "$T/help"
}
# has TEXT... : each is in $T/help: an option column ("  -e, --event EVENT...") as
# printed, or help text, which may wrap ("(default: 64M)" over two lines)
has() {
	local s
	tr '\n' ' ' <"$T/help" | tr -s ' ' >"$T/help.flat"
	for s in "$@"; do
		grep -qF -- "$s" "$T/help" || grep -qF -- "$s" "$T/help.flat" ||
			die "$cmd --help lacks '$s'" -- "$T/help"
	done
}

REC=("  -e, --event EVENT[,EVENT...]" "  -F, --freq HZ" "  -c, --count PERIOD" "  -g  "
     "      --call-graph fp|dwarf[,SIZE]|ehframe" "  -a, --all-cpus" "  -p, --pid PID[,PID...]"
     "      --no-markers" "  -z, --compress[=LEVEL]" "      --ringbuf SIZE"
     "      --aggregate SECONDS"
     "(default: 4000)" "(default: cycles; cpu-clock where there is no PMU)")
cmd=record; help record
has "${REC[@]}" "  -o, --output FILE|-" "(default: perf.data)" "      --duration SECONDS" "  -v, --verbose" "-vv"
grep -q '^usage: perfmark record .*\[-F HZ | -c PERIOD\]' "$T/help" || die "record usage lacks [-F HZ | -c PERIOD]" -- "$T/help"
grep -q '\[-- CMD \[ARG...\]\]' "$T/help" || die "record usage lacks -- CMD" -- "$T/help"
cmd=stat; help stat
has "  -e, --event EVENT[,EVENT...]" "  -a, --all-cpus" "  -p, --pid PID[,PID...]" "  -I, --interval-print MS" \
    "  -x, --field-separator SEP" "      --json" "  -o, --output FILE" "(default: perf stat's set"
grep -qF '[-a | -p PID[,PID...]]' "$T/help" && grep -qF '[-x SEP | --json]' "$T/help" ||
	die "stat usage lacks [-a | -p PID] or [-x SEP | --json]" -- "$T/help"
# perf's filters, on the four commands that read a recording (issue 22)
FILTERS=("  -c, --comm COMM[,COMM...]" "      --pid PID[,PID...]" "      --tid TID[,TID...]"
	 "  -d, --dso DSO[,DSO...]" "  -S, --sym SYM[,SYM...]" "  -C, --cpu CPUS" "      --time START,END")
cmd=script; help script
has "  -i, --input FILE|-" "      --type N" "      --json" "(default: perf.data)" "${FILTERS[@]}"
cmd=report; help report
has "  -i, --input FILE|-" "  -e, --event EVENT" "      --by-marker" "      --range NAME" \
    "  -s, --sort self|total|KEY,..." "      --json" "(default: self)" "${FILTERS[@]}" \
    "  -g, --call-graph caller|callee[,MIN]" "      --no-children" "      --percent-limit PCT" \
    "      --max-rows N" "      --percentage relative|absolute" "(default: absolute)"
cmd=flamegraph; help flamegraph
has "  -i, --input FILE|-" "  -o, --output FILE.svg|FILE.html" "      --range NAME" "  -e, --event EVENT" \
    "${FILTERS[@]}"
cmd=export; help export
has "  -i, --input FILE|-" "  -f, --format chrome|pprof|collapsed" "  -o, --output FILE" "  -e, --event EVENT" \
    "${FILTERS[@]}"
cmd=top; help top
has "${REC[@]}" "      --session NAME" "  -d, --delay SECONDS" "      --sort self|total" "      --stdio" \
    "      --frames N" "(default: 1)" "(default: self)"
grep -qF '[-a | -p PID[,PID...] | --session NAME]' "$T/help" ||
	die "top usage lacks [-a | -p PID | --session NAME]" -- "$T/help"
cmd="session create"; help session create
has "${REC[@]}" "      --ring SIZE" "  -o, --output DIR" "      --rotate SIZE|TIME" "      --keep N" "(default: 64M)"
grep -q '^usage: perfmark session create NAME ' "$T/help" || die "create usage lacks NAME" -- "$T/help"
for v in list show; do
	cmd="session $v"; help session $v; has "      --json"
done
for v in snapshot attach; do
	cmd="session $v"; help session $v; has "  -o, --output FILE|-"
	grep -q "^usage: perfmark session $v NAME -o FILE|-" "$T/help" || die "$v usage: -o is not required" -- "$T/help"
done
for v in stop start delete; do
	cmd="session $v"; help session $v
	grep -q "^usage: perfmark session $v NAME$" "$T/help" || die "$v usage" -- "$T/help"
done
"$PERFMARK" session --help >"$T/help" || die "session --help failed"
for v in create list show snapshot attach stop start delete; do
	grep -q "perfmark session $v" "$T/help" || die "session --help lacks $v" -- "$T/help"
done
"$PERFMARK" --help >"$T/help" || die "perfmark --help failed"
for c in record script report flamegraph export session top; do
	grep -q "^  $c  " "$T/help" || die "perfmark --help lacks $c" -- "$T/help"
done
# -h too, and the help comes first: nothing after it is parsed
"$PERFMARK" report -h --bogus >/dev/null || die "report -h --bogus did not print help"
ok "--help of every command lists its options and defaults"

# perfmarkd --help: every option of its man page, with the defaults
"${PERFMARKD:-$PERFMARK_BUILD/perfmarkd}" --help >"$T/dhelp" || die "perfmarkd --help failed"
grep -q '^usage: perfmarkd' "$T/dhelp" || die "perfmarkd --help has no usage line" -- "$T/dhelp"
opts=$(sed -n 's/^\.BR \\-.*\\-\\-\([a-z\\-]*\).*/\1/p; s/^\.BR \\-\\-\([a-z\\-]*\).*/\1/p' \
	"$PERFMARK_SRC/man/perfmarkd.8" | sed 's/\\//g' | sort -u)
[ "$(echo "$opts" | wc -w)" -ge 9 ] || die "found only: $opts in perfmarkd.8"
for o in $opts; do
	grep -q -- "--$o[ ,]" "$T/dhelp" || grep -q -- "--$o\$" "$T/dhelp" ||
		die "perfmarkd --help lacks --$o (perfmarkd.8 has it)" -- "$T/dhelp"
done
grep -q 'default: 30)' "$T/dhelp" && grep -q 'default: 10)' "$T/dhelp" ||
	die "perfmarkd --help lacks the defaults" -- "$T/dhelp"
ok "perfmarkd --help lists the $(echo "$opts" | wc -w) options of perfmarkd(8) with their defaults"

# every spelling the help shows is one the parser takes (bad values: each one's own error)
expect() {   # WANT-SUBSTRING CMD...
	local want=$1; shift
	"$PERFMARK" "$@" >/dev/null 2>"$T/err" </dev/null
	[ $? -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF -- "$want" "$T/err" ||
		die "perfmark $*: want one line with '$want'" -- "$T/err"
}
expect "frequency 0 out of range" record --freq=0 -- true
expect "-F and -c cannot be used together" record -F 99 --count 1000 -- true
expect "unknown call-graph mode" record --call-graph lbr -- true
expect "ring buffer size must be a power of two" record --ringbuf 5000 -- true
expect "ring buffer size must be a power of two" session create x --ringbuf 5000
expect "bad compression level '30'" record --compress=30 -- true
expect "give only one of -a, -p PID and -- CMD" record --all-cpus -- true
expect "bad duration" record --duration 0 -- true
expect "ring size must be at least 64K" session create x --ring 4K
expect "bad --keep" session create x --output "$T" --keep 0
expect "bad --rotate" session create x --output "$T" --rotate 0s
expect "give only one of --ring and --output" session create x --ring 1M --output "$T"
expect "a session NAME is needed" session create -F 99
expect "-o FILE|- is needed" session snapshot x
expect "unexpected argument 'y'" session stop x y
expect "unknown option '--ring' (try 'perfmark record --help')" record --ring 1M -- true
expect "option '--output' needs an argument" session attach x --output
expect "bad --type" script --type=-1
ok "the options shown are the options taken"

# -v: perfmark's own summary; -vv: libbpf's debug messages too
need_root; need_bpffs
for v in -v -vv; do
	"$PERFMARK" record $v -o "$T/v.data" -- true 2>"$T/v$v.err" || die "record $v failed" -- "$T/v$v.err"
done
grep -q '^\[ perfmark record: Wrote ' "$T/v-v.err" || die "record -v: no summary" -- "$T/v-v.err"
n1=$(grep -c 'libbpf' "$T/v-v.err")
n2=$(grep -c 'libbpf' "$T/v-vv.err")
[ "$n1" -eq 0 ] || die "record -v printed $n1 libbpf lines" -- "$T/v-v.err"
[ "$n2" -gt 0 ] || die "record -vv printed no libbpf debug lines" -- "$T/v-vv.err"
ok "record -v: $(wc -l <"$T/v-v.err") lines, no libbpf; -vv: $(wc -l <"$T/v-vv.err") lines, $n2 from libbpf"
