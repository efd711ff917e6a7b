#!/usr/bin/env bash
# Hostile DWARF line tables (issue 22): `export --format pprof` reads the
# DWARF of every file a recording names, to give source files and lines.
# A recorded library is swapped, after the recording, for copies of itself
# (same path, same build id) built to exhaust whoever reads their DWARF:
#   zbomb   a compressed .debug_loc that inflates 4096 times (512 MiB): libdw
#           inflates every DWARF section it knows when it opens a file
#   unit    a 2 MiB line program of one row per byte (DW_LNS_copy) for the
#           library's compile unit: libdw decodes a unit's whole table at
#           once, ~120 bytes a row (240 MB)
#   lines   the same, 40 MiB of it
#   altlink a .gnu_debugaltlink naming a FIFO (libdw would open() that path
#           itself when it meets a reference into the supplementary file)
#   fifo    the library's path is a FIFO (never opened: fsafe.h)
# For each: the export finishes (timeout), within 64 MB more RSS and 1 s
# more CPU than with the real library, says on stderr that the file's
# source lines were refused and why (one `perfmark:` line), and keeps the
# library's frames (a FIFO's by offset: libspin.so+0x...); the real
# library's lines are there before the swap.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_bpffs
[ "$PM_RECORDER" = perf ] && skip "perfmark's own export"
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
[ -x /usr/bin/time ] || skip "GNU time (package time) missing"
for c in gcc objcopy go python3; do
	command -v "$c" >/dev/null || die "$c not installed"
done
export GOCACHE=$T/gocache GOPATH=$T/gopath HOME=$T GOTOOLCHAIN=local GOFLAGS=-mod=mod

cat >"$T/spin.c" <<'EOF'
volatile unsigned long sink;
__attribute__((noinline)) void spin_leaf(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}
EOF
cat >"$T/main.c" <<'EOF'
#include <stdlib.h>
void spin_leaf(unsigned long n);
int main(int argc, char **argv)
{
	spin_leaf(strtoul(argv[1], NULL, 0));
	return 0;
}
EOF
gcc -g -O1 -fno-omit-frame-pointer -fPIC -shared -o "$T/libspin.so" "$T/spin.c" &&
	gcc -O1 -fno-omit-frame-pointer -o "$T/main" "$T/main.c" -L"$T" -lspin -Wl,-rpath,'$ORIGIN' ||
	die "cannot build the test library and program"
cp "$T/libspin.so" "$T/libspin.real"
"$PERFMARK" record -g -F 999 -o "$T/spin.data" -- "$T/main" 300000000 >/dev/null 2>"$T/rec.err" ||
	die "record failed" -- "$T/rec.err"

# export: sets RSS (KB), CPU (s); the pprof in $T/$1.pb.gz, stderr in $T/$1.err;
# the library's function named (by its symbol, or by offset when the file cannot be read)
export_as() {
	timeout 120 /usr/bin/time -o "$T/$1.time" -f '%M %U %S' \
		"$PERFMARK" export -i "$T/spin.data" --format pprof -o "$T/$1.pb.gz" 2>"$T/$1.err" ||
		die "$1: export failed or hung" -- "$T/$1.err" "$T/$1.time"
	read -r RSS u s < <(tail -n 1 "$T/$1.time")
	CPU=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
	go tool pprof -raw "$T/$1.pb.gz" >"$T/$1.raw" 2>&1 || die "$1: go tool pprof -raw failed" -- "$T/$1.raw"
	grep -Eq " (spin_leaf|libspin\.so\+0x[0-9a-f]+) " "$T/$1.raw" ||
		die "$1: the library's frames are gone" -- "$T/$1.raw"
}

export_as base
base_rss=$RSS base_cpu=$CPU
grep -Eq "spin_leaf $T/spin\.c:[0-9]+ " "$T/base.raw" || die "base: no source line for spin_leaf" -- "$T/base.raw"
grep -q 'no source lines' "$T/base.err" && die "base: lines refused" -- "$T/base.err"
ok "base: spin_leaf's lines from spin.c, ${base_rss} KB, ${base_cpu} s"

truncate -s 512M "$T/zeros"
objcopy --remove-section .debug_loc --add-section .debug_loc="$T/zeros" --compress-debug-sections=zlib \
	"$T/libspin.real" "$T/libspin.zbomb" || die "objcopy: no zbomb"
rm -f "$T/zeros"
# a DWARF 4 line program for spin.c: set_address spin_leaf, N x DW_LNS_copy, end_sequence
leaf=$(nm "$T/libspin.real" | awk '$3 == "spin_leaf" { print $1 }')
[ -n "$leaf" ] || die "no spin_leaf in libspin.so"
for k in unit:2 lines:40; do
	python3 - "$T/${k%:*}.bin" "${k#*:}" "$leaf" <<'PY' || die "cannot write the line program"
import struct, sys
path, mib, addr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 16)
hdr = bytes([1, 1, 1, 0xfb, 14, 13]) + bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])
hdr += b"\0" + b"spin.c\0\0\0\0" + b"\0"
prog = b"\0\x09\x02" + struct.pack("<Q", addr) + b"\x01" * (mib << 20) + b"\0\x01\x01"
body = struct.pack("<H", 4) + struct.pack("<I", len(hdr)) + hdr + prog
open(path, "wb").write(struct.pack("<I", len(body)) + body)
PY
	objcopy --remove-section .debug_line --add-section .debug_line="$T/${k%:*}.bin" \
		"$T/libspin.real" "$T/libspin.${k%:*}" || die "objcopy: no ${k%:*} .debug_line"
	rm -f "$T/${k%:*}.bin"
done
mkfifo "$T/altfifo"
{ printf '%s\0' "$T/altfifo"; printf '\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff\x00\x11\x22\x33\x44'; } >"$T/alt.bin"
objcopy --add-section .gnu_debugaltlink="$T/alt.bin" "$T/libspin.real" "$T/libspin.altlink" ||
	die "objcopy: no altlink"

declare -A why=([zbomb]="DWARF over budget" [lines]="DWARF over budget"
		[altlink]="supplementary DWARF not found")
for k in zbomb unit lines altlink fifo; do
	rm -f "$T/libspin.so"
	if [ "$k" = fifo ]; then mkfifo "$T/libspin.so"; else cp "$T/libspin.$k" "$T/libspin.so"; fi
	export_as "$k"
	extra_rss=$((RSS - base_rss))
	extra_cpu=$(awk -v a="$CPU" -v b="$base_cpu" 'BEGIN { printf "%+.2f", a - b }')
	[ "$extra_rss" -lt 65536 ] || die "$k: the export took $extra_rss KB more than base" -- "$T/$k.err"
	fcmp "$extra_cpu < 1.0" || die "$k: the export took $extra_cpu s more CPU than base" -- "$T/$k.err"
	grep -Eq "spin_leaf $T/spin\.c:" "$T/$k.raw" && die "$k: lines read from the swapped file" -- "$T/$k.raw"
	case $k in
	unit)
		[ "$(grep -c . "$T/$k.err")" = 1 ] &&
			grep -q "^perfmark: pprof: no source lines for the code of 1 compile units: their line programs are over budget" "$T/$k.err" ||
			die "$k: not one line saying the unit's lines were refused" -- "$T/$k.err" ;;
	fifo) ;;
	*)
		[ "$(grep -c . "$T/$k.err")" = 1 ] &&
			grep -q "^perfmark: pprof: no source lines from 1 files (.*1 ${why[$k]}" "$T/$k.err" ||
			die "$k: not one line saying the lines were refused (${why[$k]})" -- "$T/$k.err" ;;
	esac
	ok "$k: refused${why[$k]:+ (${why[$k]})}, RSS $extra_rss KB, CPU $extra_cpu s over base"
done
