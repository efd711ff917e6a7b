# Helpers of the unwinding tests t-unwind-*.sh (source after lib.sh).

# Stacks of COMM's samples in perf script's text on stdin (comm first on
# a sample's line, then a frame a line: ip, symbol): prints "M N": N
# samples (those with a frame named THROUGH, when given), M of them with a
# frame named SYM (the first word of the symbol, so
# "__libc_start_main_impl (inlined)" is __libc_start_main_impl).
count_chains() {
	awk -v c="$1" -v s="$2" -v t="${3:-}" '
		BEGIN { RS = "" }
		{
			n_l = split($0, l, "\n"); split(l[1], h, " ")
			if (h[1] != c) next
			hs = 0; ht = t == ""
			for (i = 2; i <= n_l; i++) {
				split(l[i], f, " ")
				if (f[2] == s) hs = 1
				if (f[2] == t) ht = 1
			}
			if (ht) { n++; m += hs }
		}
		END { print m + 0, n + 0 }'
}

# chains_with FILE COMM SYM [THROUGH]: count_chains of FILE as stock perf script shows it
chains_with() {
	perf script -i "$1" -F comm,tid,ip,sym 2>/dev/null | count_chains "$2" "$3" "${4:-}"
}

# The same for the samples whose leaf frame is in [LO, HI) (hex, 0x...).
# (mawk has no strtonum: addresses compare as zero-padded hex strings.)
chains_with_leaf_in() {
	perf script -i "$1" -F comm,tid,ip,sym 2>/dev/null | awk -v s="$2" -v lo="$3" -v hi="$4" '
		function key(a) { sub(/^0x/, "", a); a = sprintf("%16s", tolower(a)); gsub(/ /, "0", a); return "x" a }
		BEGIN { RS = ""; lo = key(lo); hi = key(hi) }
		{
			n_l = split($0, l, "\n"); if (n_l < 2) next
			split(l[2], f, " "); a = key(f[1])
			if (a < lo || a >= hi) next
			n++
			for (i = 2; i <= n_l; i++) { split(l[i], f, " "); if (f[2] == s) { m++; break } }
		}
		END { print m + 0, n + 0 }'
}

# perf report --children: "TOTAL SYMBOL" per symbol name.  perf can list one
# function in two rows (two dso objects for one file, e.g. when it resolves
# inlines for some of its entries only); the rows of a name are added up,
# and the raw rows are kept in FILE.rows for the log.
report_children() {
	perf report -i "$1" --stdio --children --sort sym -g none 2>/dev/null |
		awk '/^ *[0-9.]+% +[0-9.]+%/ { p = $1; sub("%", "", p); print p, $NF }' >"$1.rows"
	awk '{ t[$2] += $1 } END { for (s in t) printf "%.2f %s\n", t[s], s }' "$1.rows" | sort -rn
}

# The "unwound ..." line of perfmark record -v (stderr in FILE): the value
# before WORDS ("ended early", "at the frame limit", "without a table", ...).
unwound_count() {
	grep -o "perfmark record: unwound .*" "$1" | sed -n "s/.*[ (]\([0-9]\+\) $2.*/\1/p" | head -n 1
}

# The processes of COMM in FILE, one line each: "PID PPID M N": N of its
# samples whose first user frame is in a file whose name contains LIB, M of
# them with a frame named SYM (first word).  PPID is the parent its FORK
# names (0 without one).  A line-wise read of perf script: its task events
# and its samples' headers start a line, frames are indented.
pid_chains_in() {
	perf script -i "$1" --show-task-events -F comm,pid,ip,sym,dso 2>/dev/null |
	awk -v c="$2" -v lib="$3" -v s="$4" '
		function flush() {
			if (cur == c && user ~ lib) { n[pid]++; m[pid] += hit }
			cur = ""
		}
		/PERF_RECORD_FORK\(/ {
			flush()
			x = $0; sub(/.*FORK\(/, "", x)   # ...FORK(child:tid):(parent:ptid)
			k = x; sub(/:.*/, "", k); sub(/^[^(]*\(/, "", x); sub(/:.*/, "", x)
			par[k] = x
			next
		}
		/PERF_RECORD_/ { flush(); next }
		/^[^ \t]/ { flush(); cur = $1; pid = $2; user = ""; hit = 0; next }
		/^[ \t]/ {
			if (cur == "") next
			if (user == "" && $NF != "([kernel.kallsyms])") user = $NF
			if ($2 == s) hit = 1
			next
		}
		{ flush() }
		END { flush(); for (p in n) print p, par[p] + 0, m[p] + 0, n[p] }'
}

# Debian's xz started through shells (issue 18 case 13), for
# t-unwind-shell.sh and t-unwind-foreign.sh.  xz_shells_init: a few
# hundred ms of input for xz, LIB and MAIN (what its samples in LIB must
# reach) and the shapes of shell.
xz_shells_init() {
	LIB=liblzma
	MAIN=__libc_start_call_main
	head -c 700000 /dev/urandom | base64 >"$T/in.txt"
	XZ="xz -6 -T1 -c $T/in.txt >/dev/null"
	shapes=("sh -c" "bash -c &")
}

# shell_cmd SHAPE: SHCMD, xz through a shell of that shape
shell_cmd() {
	case $1 in
	"sh -c") SHCMD=(sh -c "$XZ");;
	"bash -c &") SHCMD=(bash -c "$XZ & wait");;
	esac
}

# check_run WHAT PID M N: one xz run's liblzma samples
check_run() {
	local what=$1 pid=$2 m=$3 n=$4
	[ "$n" -ge 100 ] || die "$what: xz pid $pid has only $n samples in $LIB"
	fcmp "$m / $n >= 0.95" || die "$what: $m of $n $LIB samples of xz pid $pid reach $MAIN"
	echo "  $what: xz $pid: $m of $n"
}

# session_xz_runs SESSION: RUNS runs of xz through each shape while the
# system-wide SESSION records; after each shape (every xz of it has exited)
# a snapshot, in which each xz the test's shells started passes check_run.
# Dies unless all 2 x RUNS are found.  One snapshot per shape: on a loaded
# machine the other processes' stacks turn the ring over within the twenty
# runs, and the first ones' samples were gone from a single one.
session_xz_runs() {
	local sess=$1 shape i sh_pid pid ppid m n found=0
	local -A shell_of

	for shape in "${shapes[@]}"; do
		shell_cmd "$shape"
		for i in $(seq "$RUNS"); do
			"${SHCMD[@]}" &
			sh_pid=$!
			wait "$sh_pid" || die "$shape run $i failed"
			shell_of[$sh_pid]="$shape run $i"
		done
		# the daemon reads up to the request: the snapshot has all they did
		pm session snapshot "$sess" -o "$T/snap" || die "snapshot failed" -- "$T/pmd.log"
		pm session show "$sess" 2>&1 | grep unwind:
		pid_chains_in "$T/snap" xz "$LIB" "$MAIN" >"$T/runs"
		while read -r pid ppid m n; do
			[[ "${shell_of[$ppid]:-}" == "$shape "* ]] || continue     # somebody else's xz
			check_run "session, ${shell_of[$ppid]}" "$pid" "$m" "$n"
			found=$((found + 1))
		done <"$T/runs"
	done
	[ "$found" -eq $((2 * RUNS)) ] ||
		die "session: xz of $found shells of $((2 * RUNS)) in the snapshots" -- "$T/runs"
}

# Foreign load for a system-wide ehframe session (started with bg, killed at
# exit): other people's programs whose tables the recorder must build.  Each
# round copies gcc's cc1 (2.3 MiB of .eh_frame: about half a second of
# table building) under a build-id of its own, so neither the file cache nor
# the build-id finds a table for it, and runs it; then a few short programs
# (python3, gcc --version); about two rounds a second.  Every round appends
# a line to DIR/rounds.
foreign_load() {
	local dir=$1 cc1 off i=0
	cc1=$(gcc -print-prog-name=cc1) || return 1
	# the build-id note's bytes: after the 12-byte note header and "GNU\0"
	off=$(readelf -S -W "$cc1" | awk '{ for (i = 1; i < NF; i++) if ($i == ".note.gnu.build-id") print $(i + 3) }')
	[ -n "$off" ] || return 1
	off=$((16#$off + 16))
	while :; do
		i=$((i + 1))
		cp "$cc1" "$dir/cc1.$i"
		dd if=/dev/urandom of="$dir/cc1.$i" bs=1 seek="$off" count=20 conv=notrunc status=none
		"$dir/cc1.$i" --version </dev/null >/dev/null 2>&1
		rm -f "$dir/cc1.$i"
		/usr/bin/python3 -c pass
		gcc --version >/dev/null
		echo "$i" >>"$dir/rounds"
		sleep 0.3           # a pace, not a wait: others' compilers come and go
	done
}

# A CPU hog on every CPU (bg), as on a machine others share.
cpu_hogs() {
	local c
	for c in $(seq "$(nproc)"); do
		bg sh -c 'while :; do :; done'
	done
}
