#!/usr/bin/env bash
# What the ehframe unwinder must survive: a binary without any call frame
# information (stripped, no frame pointers), code generated at run time (no
# file; a frame pointer, as JITs keep), a program whose .eh_frame is garbage,
# and a recursion deeper than the 127 frames kept.  Each records (no crash,
# the BPF program loads), stock perf reads the file, and stacks that end
# early are counted by reason in record -v's summary.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/unwind-lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
[ "$PM_RECORDER" = perf ] && skip "perfmark's own unwinder (ehframe) and its counters"
[ -x "$PROGS/prog-unwind" ] && [ -x "$PROGS/prog-unwind-noeh" ] || skip "no prog-unwind(-noeh)"

record() {   # NAME CMD...: record -v with ehframe into $T/NAME.data, stderr in $T/NAME.err
	local name=$1; shift
	"$PERFMARK" record -v --call-graph ehframe -o "$T/$name.data" -- "$@" >"$T/$name.out" 2>"$T/$name.err" ||
		die "$name: record failed" -- "$T/$name.err"
	grep -q "perfmark record: unwound" "$T/$name.err" || die "$name: no unwind summary" -- "$T/$name.err"
	n=$(samples_flat "$T/$name.data" | wc -l)
	[ "$n" -ge 1000 ] || die "$name: stock perf reads $n samples" -- "$T/$name.err"
}

# --- no CFI, no frame pointers: the chain ends, counted -----------------------
record noeh "$PROGS/prog-unwind-noeh" 1.5
k=$(unwound_count "$T/noeh.err" "without a table")
[ "${k:-0}" -ge 500 ] || die "noeh: ${k:-0} stacks counted as ending without a table" -- "$T/noeh.err"
ok "no .eh_frame: $k stacks counted as ended without a table"

# --- generated code: no table there, the frame pointer takes over for that frame
record jit "$PROGS/prog-unwind" jit 2
lo=$(awk '$1 == "jit" { print $2 }' "$T/jit.out")
[ -n "$lo" ] || die "jit: no address printed" -- "$T/jit.out"
hi=$(printf '0x%x' $((lo + 64)))
read -r m n < <(chains_with_leaf_in "$T/jit.data" main "$lo" "$hi")
[ "$n" -ge 1000 ] || die "jit: only $n samples in the generated code" -- "$T/jit.err"
fcmp "$m / $n >= 0.9" || die "jit: $m of $n samples in generated code reach main" -- "$T/jit.err"
ok "generated code: $m of $n samples reach main through it (frame pointer for one frame)"

# --- garbage .eh_frame: whatever the table says, nothing breaks ----------------
cp "$PROGS/prog-unwind" "$T/prog-garbage"
read -r size off < <(objdump -h "$T/prog-garbage" | awk '$2 == ".eh_frame" { print $3, $6 }')
off=$(printf '%d' "0x$off") size=$(printf '%d' "0x$size")
[ "$size" -gt 64 ] || die "no .eh_frame in prog-unwind"
head -c $((size - 32)) /dev/urandom | dd of="$T/prog-garbage" bs=1 seek=$((off + 32)) conv=notrunc status=none
record garbage "$T/prog-garbage" tree 1.5
grep -q "^self t6" "$T/garbage.out" || die "the program with garbage CFI did not run to its end" -- "$T/garbage.out"
ok "garbage .eh_frame: recorded, $(unwound_count "$T/garbage.err" "ended early") stacks ended early"

# --- deeper than the frame limit ------------------------------------------------
record deep "$PROGS/prog-unwind" recurse 300 1.5
d=$(unwound_count "$T/deep.err" "at the frame limit")
[ "${d:-0}" -ge 500 ] || die "recursion 300 deep: ${d:-0} stacks at the frame limit" -- "$T/deep.err"
max=$(perf script -i "$T/deep.data" -F ip 2>/dev/null | awk 'BEGIN { RS = "" } { n = split($0, l, "\n"); if (n > m) m = n } END { print m }')
[ "$max" -le 128 ] && [ "$max" -ge 120 ] || die "recursion: longest chain $max frames"
ok "recursion 300 deep: $d stacks stopped at the frame limit, longest chain $max frames"

# --- perf's largest stack copy: 300 frames of recursion need more than 8 KiB
"$PERFMARK" record --call-graph dwarf,65528 -o "$T/big.data" -- "$PROGS/prog-unwind" recurse 300 1 \
	>/dev/null 2>"$T/big.err" || die "dwarf,65528: record failed" -- "$T/big.err"
sz=$(perf script -i "$T/big.data" -D 2>/dev/null | sed -n 's/.*ustack: size \([0-9]*\),.*/\1/p' | sort -n | tail -n 1)
[ "${sz:-0}" -gt 8192 ] || die "dwarf,65528: largest stack copy ${sz:-0} bytes"
read -r m n < <(perf script --max-stack 1024 -i "$T/big.data" -F comm,ip,sym 2>/dev/null | awk '
	BEGIN { RS = "" } /^ *prog-unwind/ { n++; if ($0 ~ /\n[^\n]* main(\n|$)/) m++ } END { print m + 0, n + 0 }')
fcmp "$m / $n >= 0.95" || die "dwarf,65528: $m of $n chains 300 deep reach main (perf script --max-stack 1024)"
ok "dwarf,65528: copies of up to $sz bytes, $m of $n chains 300 frames deep reach main"
