#!/usr/bin/env bash
# Regenerate the seeds of fuzz-srcline (tests/fuzz/corpus/srcline): small
# shared objects with DWARF (5, 4, compressed sections; inlined functions),
# each as { u8 nfind, nfind u32 file offsets (little endian), the file },
# the offsets those of its functions' code.
#   tests/fuzz/srcline-seeds.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$here/corpus/srcline
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/d.c" <<'C'
static inline int sq(int x) { return x * x; }
static inline int add_sq(int a, int b) { return sq(a) + sq(b); }
int leaf(int x) { return x ? leaf(x - 1) * 3 : 1; }
int top(int a, int b) { return add_sq(a, b) + leaf(a); }
C
small="-O2 -shared -fPIC -nostdlib -Wl,-z,noseparate-code -Wl,-z,max-page-size=16 -Wl,--build-id=none"

seed() {   # NAME GCC-FLAGS...
	local name=$1 off
	shift
	# shellcheck disable=SC2086
	gcc "$@" $small -fdebug-prefix-map="$tmp"=/src -o "$tmp/$name.so" "$tmp/d.c"
	{
		printf '\x04'
		for sym in leaf top; do
			off=$(nm "$tmp/$name.so" | awk -v s="$sym" '$3 == s { print $1 }')
			for d in 0 8; do
				printf '%08x' $((0x$off + d)) | sed 's/../&\n/g' | tac | tr -d '\n' |
					sed 's/../\\x&/g' | xargs -0 printf
			done
		done
		cat "$tmp/$name.so"
	} >"$out/$name"
}

seed dwarf5 -g
seed dwarf4 -gdwarf-4
seed zlib -g -Wl,--compress-debug-sections=zlib
seed lines-only -g1
