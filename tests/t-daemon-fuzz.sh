#!/usr/bin/env bash
# Fuzz perfmarkd's request parser (tests/fuzz-proto.c) with libFuzzer for
# FUZZ_SECONDS (default 20).
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || skip "clang not installed"
src=$PERFMARK_SRC
cflags=$(pkg-config --cflags json-c 2>/dev/null)
libs=$(pkg-config --libs json-c 2>/dev/null)
[ -n "$libs" ] || skip "json-c development files missing"
clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -std=gnu11 \
	-I"$src/daemon" $cflags "$src/tests/fuzz-proto.c" "$src/daemon/proto.c" \
	"$src/daemon/store.c" "$src/daemon/evspec.c" $libs -o "$T/fuzz-proto" 2>"$T/cc.log" ||
	{ grep -q 'fuzzer' "$T/cc.log" && skip "clang without libFuzzer"; die "fuzzer build failed" -- "$T/cc.log"; }
mkdir "$T/corpus"
printf '\x1d\x00\x00\x00{"v":1,"cmd":"list","x":[1]}' >"$T/corpus/list"
body='{"v":1,"cmd":"create","name":"a","def":{"events":["cpu-clock"],"freq":99,"sink":"file","dir":"/tmp","rotate_size":100000,"keep":2,"target":"pids","pids":[1]}}'
python3 -c "import struct,sys; b=sys.argv[1].encode(); sys.stdout.buffer.write(struct.pack('<I',len(b))+b)" "$body" >"$T/corpus/create"
"$T/fuzz-proto" -max_total_time="${FUZZ_SECONDS:-20}" -max_len=4096 -timeout=10 \
	"$T/corpus" >"$T/fuzz.log" 2>&1 || die "fuzzer found a problem" -- "$T/fuzz.log"
tail -n 2 "$T/fuzz.log"
ok "fuzz-proto ran ${FUZZ_SECONDS:-20} s clean"
