#!/usr/bin/env bash
# A traced process's frame pointers are data (issue 18): the user stacks of
# -g samples and of --off-cpu are walked in BPF through the thread's rbp
# and its stack (bpf/ustack.bpf.h, ustack_fp), and the process writes both.
# A program sets rbp, as it is free to, to
#   self    a frame whose next frame is itself
#   chain   4000 frames on its stack, each pointing to the one above (a
#           chain longer than any stack is kept)
#   kernel  a kernel address
#   low     0x10 (below the stack: where code without frame pointers leaves
#           any value, and where every chain ends, at 0)
# and, each in turn, blocks in nanosleep (an off-CPU interval) and spins (cpu-clock
# samples).  The recording ends normally; every stack of the program holds
# its pc, then only the frames the chain really has: self one (0x1111),
# chain the first ones in order (0x5000, 0x5001, ...) up to the frame limit,
# kernel and low none; and a thread of the same program with honest frame
# pointers keeps whole stacks (main) throughout.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
[ "$PM_RECORDER" = perf ] && skip "perfmark's own walk of frame pointers"
command -v gcc >/dev/null || die "gcc not installed"

cat >"$T/fp.c" <<'C'
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile int done;

/* nanosleep with rbp set to fp: the raw system call, rbp restored after */
static void sleep_with_fp(uint64_t fp, long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	long ret;

	__asm__ volatile("push %%rbp\n\tmov %2, %%rbp\n\tsyscall\n\tpop %%rbp"
			 : "=a"(ret) : "0"(35L), "r"(fp), "D"(&ts), "S"(0L)
			 : "rcx", "r11", "memory");
	(void)ret;
}

/* spin with rbp set to fp */
static void spin_with_fp(uint64_t fp, unsigned long n)
{
	__asm__ volatile("push %%rbp\n\tmov %1, %%rbp\n1:\tdec %0\n\tjnz 1b\n\tpop %%rbp"
			 : "+r"(n) : "r"(fp) : "memory", "cc");
}

/* the honest thread: whole stacks through honest_leaf, honest_loop, start_thread */
__attribute__((noinline)) void honest_leaf(void)
{
	struct timespec ts = { 0, 2000000 };
	volatile unsigned long s = 0;

	for (unsigned long i = 0; i < 2000000; i++)
		s += i;
	nanosleep(&ts, NULL);
}
__attribute__((noinline)) void *honest_loop(void *a)
{
	while (!done)
		honest_leaf();
	return a;
}

__attribute__((noinline)) void bomb(const char *mode, unsigned long spin)
{
	uint64_t chain[8000];
	uint64_t fp;

	if (!strcmp(mode, "self")) {
		chain[0] = (uint64_t)&chain[0];
		chain[1] = 0x1111;
		fp = (uint64_t)&chain[0];
	} else if (!strcmp(mode, "chain")) {
		for (int k = 0; k < 4000; k++) {
			chain[2 * k] = (uint64_t)&chain[2 * k + 2];
			chain[2 * k + 1] = 0x5000 + k;
		}
		chain[7998] = 0;
		chain[7999] = 0;
		fp = (uint64_t)&chain[0];
	} else if (!strcmp(mode, "kernel")) {
		fp = 0xffffffff81000000ull;
	} else {
		fp = 0x10;
	}
	for (int i = 0; i < 20; i++) {
		sleep_with_fp(fp, 5);
		spin_with_fp(fp, spin);
	}
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	pthread_t t;

	pthread_create(&t, NULL, honest_loop, NULL);
	for (int i = 1; i < argc - 1; i++)
		bomb(argv[i], strtoul(argv[argc - 1], NULL, 0));
	done = 1;
	pthread_join(t, NULL);
	return 0;
}
C
gcc -O1 -g -fno-omit-frame-pointer -mno-red-zone -pthread -o "$T/fp-bomb" "$T/fp.c" ||
	die "cannot build the test program"

# how long a spin of 20 rounds takes here: ~50 ms each
n=20000000

# the stacks of every sample of the program, user part only, one line each:
# "EVENT TID pc frames..." (addresses in hex)
stacks() {
	perf script -i "$1" -F event,tid,ip 2>/dev/null | awk '
		/^ *[0-9]+ / && NF >= 2 { if (ev != "") print ev, tid, s; tid = $1; ev = $2; sub(/:$/, "", ev); s = ""; next }
		NF == 1 && $1 !~ /^ffffffff/ { s = s " " $1 }
		END { if (ev != "") print ev, tid, s }'
}

for how in "-g" "-g --off-cpu=0"; do
	d=$T/rec${how//[ =-]/}
	mkdir -p "$d"
	"$PERFMARK" record -v -F 2000 $how -o "$d/perf.data" -- \
		"$T/fp-bomb" self chain kernel low "$n" >"$d/out" 2>"$d/err" ||
		die "record $how failed" -- "$d/err"
	stacks "$d/perf.data" >"$d/stacks"
	[ -s "$d/stacks" ] || die "record $how: no samples" -- "$d/err"
	python3 - "$d/stacks" "$how" <<'PY' || die "record $how: stacks wrong" -- "$d/err"
import sys
lines = [l.split() for l in open(sys.argv[1])]
crafted = {"self": 0, "chain": 0}
off = {"self": 0, "chain": 0}
longest = 0
for ev, tid, *fr in lines:
    if not fr:
        continue
    pcs = [int(f, 16) for f in fr]
    assert len(pcs) <= 127, f"{len(pcs)} user frames: more than the limit"
    # the crafted frames' return addresses, which are never code, say which
    rest = pcs[1:]
    if rest[:1] == [0x1111]:
        assert rest == [0x1111], f"self: {rest[:5]}..."
        crafted["self"] += 1
        off["self"] += ev == "offcpu-time"
    elif rest[:1] == [0x5000]:
        assert rest == list(range(0x5000, 0x5000 + len(rest))), f"chain out of order: {rest[:8]}"
        crafted["chain"] += 1
        off["chain"] += ev == "offcpu-time"
        longest = max(longest, len(pcs))
for k in ("self", "chain"):
    assert crafted[k] > 0, f"no {k} stack seen: {crafted}"
    if "off-cpu" in sys.argv[2]:
        assert off[k] > 0, f"no offcpu-time sample with the {k} stack: {off}"
assert longest >= 60, f"chain stacks cut at {longest} frames"
print(f"{sys.argv[2]}: self {crafted['self']} stacks ({off['self']} off-CPU), "
      f"chain {crafted['chain']} ({off['chain']} off-CPU, longest {longest} frames)")
PY
	# the honest thread: its stacks reach main's thread start
	h=$(perf script -i "$d/perf.data" -F ip,sym 2>/dev/null | awk '
		/^$/ { if (inh) { n++; if (st) m++ } inh = 0; st = 0; next }
		/honest_leaf/ { inh = 1 } /honest_loop/ { if (inh) st = 1 }
		END { print m + 0, n + 0 }')
	read -r m t <<<"$h"
	[ "$t" -ge 10 ] && fcmp "$m / $t >= 0.95" ||
		die "record $how: $m of $t stacks through honest_leaf reach honest_loop"
	ok "record $how: crafted frame pointers walked within bounds; $m of $t honest stacks whole"
done
