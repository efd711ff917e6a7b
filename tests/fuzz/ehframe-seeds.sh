#!/usr/bin/env bash
# Regenerate the seeds of fuzz-ehframe (tests/fuzz/corpus/ehframe): real
# call frame information sections, each as { u8 flags, u64 address, bytes },
# and small whole ELF files (flags 2).
#   tests/fuzz/ehframe-seeds.sh BUILD
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: ehframe-seeds.sh BUILD}
out=$here/corpus/ehframe
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

seed() {   # NAME FILE SECTION FLAGS
	local addr
	addr=$(objdump -h "$2" | awk -v s="$3" '$2 == s { print $4 }')
	[ -n "$addr" ] || return 0
	objcopy --dump-section "$3=$tmp/sec" "$2" "$tmp/junk"
	{
		printf "\\x$(printf %02x "$4")"
		# the address, 8 bytes little endian
		printf '%016x' "0x$addr" | sed 's/../&\n/g' | tac | tr -d '\n' | sed 's/../\\x&/g' | xargs -0 printf
		cat "$tmp/sec"
	} >"$out/$1"
}

seed prog-unwind "$build/tests/prog-unwind" .eh_frame 0
seed xz /usr/bin/xz .eh_frame 0
printf 'int f(int x) { return x ? f(x - 1) * 3 : 1; }\nint g(void) { char b[300]; b[0] = 1; return f(b[0]); }\n' >"$tmp/d.c"
gcc -g -O1 -fno-asynchronous-unwind-tables -c "$tmp/d.c" -o "$tmp/d.o"
seed debug-frame "$tmp/d.o" .debug_frame 1

whole() {   # NAME FILE: flags 2, the address unused
	{ printf '\x02\0\0\0\0\0\0\0\0'; cat "$2"; } >"$out/$1"
}
gcc -O1 -c "$tmp/d.c" -o "$tmp/e.o"
whole elf-object "$tmp/e.o"
objcopy --compress-debug-sections=zlib "$tmp/d.o" "$tmp/dz.o"
whole elf-zdebug-frame "$tmp/dz.o"
ls -l "$out"
