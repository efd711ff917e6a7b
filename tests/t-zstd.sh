#!/usr/bin/env bash
# perfmark record -z: stock perf reads the compressed file and finds the same
# samples (symbols, counts within a few %) and byte-identical markers as in an
# uncompressed recording of the same deterministic workloads; the header shows
# the compressed feature and the level (-z5); -z in pipe mode; the summary
# gives the ratio; bad levels are refused; truncated and corrupted compressed
# input gives one `perfmark: ` line and exit 1 from perfmark script, never a
# crash or a hang.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
command -v python3 >/dev/null || skip "python3 missing"
MARKPROG=$PROGS/prog-markers
[ -x "$MARKPROG" ] || skip "no $MARKPROG"

rec() {   # label args...: perfmark record, stderr to $T/label.err
	local label=$1; shift
	"$PERFMARK" record "$@" >"$T/$label.out" 2>"$T/$label.err" ||
		die "[$label] perfmark record $* failed" -- "$T/$label.err"
}

# ---- samples: prog-ratio, work split by its own CPU time (deterministic) -------
rec u -g -o "$T/u.data" -- "$PROGS/prog-ratio" 1
rec z -g -z -o "$T/z.data" -- "$PROGS/prog-ratio" 1
grep -Eq 'compressed [0-9]+(\.[0-9]+)?x' "$T/z.err" || die "summary line lacks the compression ratio" -- "$T/z.err"
grep -q 'compressed' "$T/u.err" && die "uncompressed summary claims compression" -- "$T/u.err"
ok "summary: $(grep -o 'compressed [0-9.]*x' "$T/z.err")"

perf report --header-only -i "$T/z.data" >"$T/z.hdr" 2>&1
grep -Eq '^# compressed : Zstd, level = 1, ratio = [0-9]+' "$T/z.hdr" ||
	die "perf report --header-only shows no zstd compressed feature" -- "$T/z.hdr"
ok "header: $(grep '^# compressed' "$T/z.hdr")"

# Every sample the recorder says it wrote is read back, compressed or not.
# (Comparing the two runs' counts would test the machine: under a CPU hog
# on each CPU, two runs of the same 1 s of CPU gave 4016 and 3774 samples.)
nsamp() { perf script -i "$1" -F comm 2>/dev/null | wc -l; }
wrote() { sed -n 's/.*(\([0-9]*\) samples,.*/\1/p' "$1"; }
nu=$(nsamp "$T/u.data"); nz=$(nsamp "$T/z.data")
wu=$(wrote "$T/u.err"); wz=$(wrote "$T/z.err")
[ -n "$wu" ] && [ -n "$wz" ] || die "no sample count in the record summaries" -- "$T/u.err" "$T/z.err"
[ "$nu" -gt 2000 ] || die "uncompressed recording has only $nu samples"
[ "$nz" -gt 2000 ] || die "compressed recording has only $nz samples"
[ "$nu" -eq "$wu" ] || die "uncompressed: perf script reads $nu samples, the recorder wrote $wu" -- "$T/u.err"
[ "$nz" -eq "$wz" ] || die "compressed: perf script reads $nz samples, the recorder wrote $wz" -- "$T/z.err"
ok "samples: perf script reads all $nz the recorder wrote compressed, all $nu uncompressed"

report_self "$T/u.data" >"$T/u.self"
report_self "$T/z.data" >"$T/z.self"
# every symbol at >= 2.5% in one report is in the other (two runs: below
# that, kernel noise such as handle_softirqs at 1.3% comes and goes)
for pair in "u z" "z u"; do
	set -- $pair
	awk '$1 >= 2.5 { print $2 }' "$T/$1.self" | while read -r s; do
		grep -q " $s\$" "$T/$2.self" || { echo "$s"; break; }
	done >"$T/missing"
	[ -s "$T/missing" ] && die "symbol $(cat "$T/missing") (>= 2.5% in $1) missing from $2" -- "$T/u.self" "$T/z.self"
done
a=$(pct_of "$T/z.self" work_a); b=$(pct_of "$T/z.self" work_b)
ua=$(pct_of "$T/u.self" work_a)
fcmp "$b > 0 && $a / $b >= 2.25 && $a / $b <= 3.75" || die "compressed: work_a:work_b = $a:$b" -- "$T/z.self"
fcmp "$a - $ua < 5 && $ua - $a < 5" || die "work_a $a% compressed vs $ua% uncompressed"
# call chains survive compression
perf report -i "$T/z.data" --stdio --no-children -g caller --sort sym 2>/dev/null >"$T/z.caller"
grep -A4 '\] work_a$' "$T/z.caller" | grep -qw main || die "compressed: work_a's chain lacks main" -- "$T/z.caller"
ok "same symbols (>= 2.5%), work_a $a% / $ua%, work_b $b%, chains reach main"

us=$(stat -c %s "$T/u.data"); zs=$(stat -c %s "$T/z.data")
fcmp "$us / $zs >= 6" || die "-z file is only $(awk "BEGIN { printf \"%.1f\", $us / $zs }")x smaller ($zs vs $us bytes)"
ok "file sizes: $us -> $zs bytes ($(awk "BEGIN { printf \"%.1f\", $us / $zs }")x)"

# ---- markers: prog-markers mix (fixed texts and payloads, threads, fork, exec) --
marker_dump() {   # perf script's marker payloads (dumps and strings), no pids/times
	perf script -i "$1" 2>/dev/null | awk '
		/\[[0-9]+\] +[0-9]+\.[0-9]+: / {
			m = ($0 ~ / perfmark:(printf|uevent):/)
			if (m) { n++; e = $0; sub(/.* perfmark:/, "perfmark:", e); sub(/:.*/, "", e); print "#" n, e }
			next
		}
		m { print "#" n, $0 }' | sort -k1,1 -s | awk '{ k = $1; $1 = ""; a[k] = a[k] $0 "|" } END { for (k in a) print a[k] }' | sort
}
pm_markers() { "$PERFMARK" script -i "$1" 2>/dev/null | grep -E 'perfmark:(printf|uevent)' | sed 's/.*perfmark:/perfmark:/' | sort; }
rec mu -o "$T/mu.data" -- "$MARKPROG" mix 200
rec mz -z -o "$T/mz.data" -- "$MARKPROG" mix 200
marker_dump "$T/mu.data" >"$T/mu.perf"
marker_dump "$T/mz.data" >"$T/mz.perf"
n=$(wc -l <"$T/mu.perf")
[ "$n" -ge 400 ] || die "only $n markers in the uncompressed recording" -- "$T/mu.perf"
cmp -s "$T/mu.perf" "$T/mz.perf" ||
	die "perf script markers differ between -z and uncompressed ($(wc -l <"$T/mz.perf") vs $n)" -- \
		<(diff "$T/mu.perf" "$T/mz.perf")
grep -q 'BPF string: "thr=1 seq=198"' "$T/mz.perf" || die "no string marker in perf script of the -z file"
pm_markers "$T/mu.data" >"$T/mu.pm"
pm_markers "$T/mz.data" >"$T/mz.pm"
[ "$(wc -l <"$T/mu.pm")" -eq "$n" ] || die "perfmark script: $(wc -l <"$T/mu.pm") markers, perf script $n"
cmp -s "$T/mu.pm" "$T/mz.pm" || die "perfmark script markers differ between -z and uncompressed" -- <(diff "$T/mu.pm" "$T/mz.pm")
ok "$n markers identical with and without -z (perf script and perfmark script)"

# ---- -z5, -z in pipe mode ----------------------------------------------------------
rec z5 -z5 -o "$T/z5.data" -- "$MARKPROG" mix 50
perf report --header-only -i "$T/z5.data" 2>&1 | grep -q '^# compressed : Zstd, level = 5,' ||
	die "-z5: header does not say level = 5" -- "$T/z5.err"
[ "$(marker_dump "$T/z5.data" | wc -l)" -gt 100 ] || die "-z5 file: markers missing"
ok "-z5: level 5 in the header, markers readable"

"$PERFMARK" record -z -o - -- "$MARKPROG" mix 200 2>"$T/zp.err" | tee "$T/zp.data" |
	perf script -i - >"$T/zp.script" 2>"$T/zp.perr"
[ "${PIPESTATUS[0]}" -eq 0 ] || die "record -z -o - failed" -- "$T/zp.err"
grep -Eq 'compressed [0-9.]+x' "$T/zp.err" || die "pipe -z summary lacks the ratio" -- "$T/zp.err"
zpn=$(grep -Ec ' perfmark:(printf|uevent):' "$T/zp.script")
[ "$zpn" -eq "$n" ] || die "perf script -i - of a -z stream: $zpn markers, want $n" -- "$T/zp.perr"
"$PERFMARK" script -i - <"$T/zp.data" | grep -E 'perfmark:(printf|uevent)' | sed 's/.*perfmark:/perfmark:/' | sort >"$T/zp.pm"
cmp -s "$T/mu.pm" "$T/zp.pm" || die "perfmark script -i - of a -z stream: markers differ" -- <(diff "$T/mu.pm" "$T/zp.pm")
ok "-z -o -: perf script -i - and perfmark script -i - see all $n markers"

# ---- bad levels ----------------------------------------------------------------------
for z in -z0 -z23 -zx; do
	"$PERFMARK" record "$z" -o "$T/bad.data" -- true >/dev/null 2>"$T/bad.err"
	rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/bad.err")" -eq 1 ] && grep -q '^perfmark: .*level' "$T/bad.err" ||
		die "record $z: rc $rc, want 1 and one 'perfmark: ... level' line" -- "$T/bad.err"
done
ok "bad levels refused: $(cat "$T/bad.err")"

# ---- truncated and corrupted compressed input ------------------------------------------
# A recording long enough to hold several rounds (several COMPRESSED records).
rec zc -g -z -o "$T/zc.data" -- "$MARKPROG" loop 1 zc
"$PERFMARK" record -g -z -o - -- "$MARKPROG" loop 1 zcp 2>"$T/zcp.err" >"$T/zcp.data" ||
	die "record -z -o - >file failed" -- "$T/zcp.err"
check_bad() {   # label file [good]: perfmark script must fail cleanly
	local label=$1 f=$2 good=${3:-} rc
	timeout -k 2 20 "$PERFMARK" script -i "$f" >"$T/e.out" 2>"$T/e.err"
	rc=$?
	# Some bits of a zstd block change nothing: a Huffman or FSE table
	# description can carry weights of symbols the block never uses.  Such
	# a flip decodes to the very same bytes, so no checksum can see it,
	# and the records read back are the recording's own.
	if [ "$rc" -eq 0 ] && [ -n "$good" ] && cmp -s "$T/e.out" "$good"; then
		echo "$label: decodes to identical records (a bit zstd does not use)" >>"$T/same.log"
		return
	fi
	[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || die "[$label] perfmark script hung"
	[ "$rc" -eq 1 ] || die "[$label] exit status $rc, want 1" -- "$T/e.err"
	[ "$(wc -l <"$T/e.err")" -eq 1 ] && grep -q '^perfmark: ' "$T/e.err" ||
		die "[$label] want exactly one 'perfmark: ' line on stderr" -- "$T/e.err"
	echo "$label: $(cat "$T/e.err")" >>"$T/bad.log"
}
# offsets and sizes of the COMPRESSED (81) records, file or pipe layout
python3 - "$T/zc.data" "$T/zcp.data" >"$T/comp.lst" <<'PY' || die "cannot list COMPRESSED records"
import struct, sys
for path in sys.argv[1:]:
    d = open(path, 'rb').read()
    magic, hsize = struct.unpack_from('<QQ', d, 0)
    off, end = (16, len(d)) if hsize == 16 else struct.unpack_from('<QQ', d, 40)
    if hsize != 16:
        end += off
    n = 0
    bounds = []
    while off + 8 <= end:
        t, misc, size = struct.unpack_from('<IHH', d, off)
        if size < 8:
            break
        if t == 81:
            print(path, off, size)
            n += 1
        off += size
        bounds.append(off)
    assert n >= 3, (path, n)
    # record boundaries of a stream: a stream cut exactly there cannot be
    # told from a shorter complete one, so cuts are moved off them
    if hsize == 16:
        open(path + '.bounds', 'w').write(''.join('%d\n' % b for b in bounds))
PY
for f in zc zcp; do
	size=$(stat -c %s "$T/$f.data")
	# cuts in the header, in the data, inside the first and last COMPRESSED
	# record, and just before the end
	offs="8 100 $((size / 3)) $((size / 2)) $((size - 5))"
	while read -r p off sz; do
		[ "$p" = "$T/$f.data" ] && offs="$offs $((off + 4)) $((off + sz / 2)) $((off + sz - 1))"
	done < <(sed -n '1p;$p' <(grep "^$T/$f.data " "$T/comp.lst"))
	for o in $offs; do
		[ -f "$T/$f.data.bounds" ] && grep -qx "$o" "$T/$f.data.bounds" && o=$((o + 3))
		head -c "$o" "$T/$f.data" >"$T/cut.data"
		check_bad "$f cut at $o" "$T/cut.data"
	done
	# byte flips inside COMPRESSED payloads: start, middle, end, of several records
	"$PERFMARK" script -i "$T/$f.data" >"$T/$f.good" 2>"$T/$f.good.err" ||
		die "perfmark script $f.data failed" -- "$T/$f.good.err"
	i=0
	while read -r p off sz; do
		i=$((i + 1))
		[ $((i % 2)) -eq 1 ] || continue
		for at in 8 $((sz / 4)) $((sz / 2)) $((sz * 3 / 4)) $((sz - 1)); do
			python3 -c '
import sys
src, dst, pos, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
d = bytearray(open(src, "rb").read())
for k in range(n):
    d[pos + k] ^= 0x5a
open(dst, "wb").write(d)' "$T/$f.data" "$T/flip.data" $((off + at)) 1
			check_bad "$f flip at $((off + at)) (record at $off +$at)" "$T/flip.data" "$T/$f.good"
		done
	done < <(grep "^$T/$f.data " "$T/comp.lst")
	# the same through stdin for the stream
	if [ "$f" = zcp ]; then
		head -c $((size / 2)) "$T/zcp.data" | "$PERFMARK" script -i - >/dev/null 2>"$T/e.err"
		[ "$?" -eq 1 ] && [ "$(wc -l <"$T/e.err")" -eq 1 ] || die "stdin cut: want one error line, exit 1" -- "$T/e.err"
	fi
done
ok "$(wc -l <"$T/bad.log") truncated/corrupted inputs: one error line, exit 1 each" \
	"($(cat "$T/same.log" 2>/dev/null | wc -l) flips decode to identical records)"
for k in 'zc cut' 'zc flip' 'zcp cut' 'zcp flip'; do
	grep -m 1 "^$k" "$T/bad.log" | sed "s|$T/||; s/^/    /"
done
echo "t-zstd: all checks passed"
