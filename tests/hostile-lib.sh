# Helpers for tests/t-hostile-*.sh (issue 8), sourced after lib.sh: the test
# daemon (daemon-lib.sh) and real users (users-lib.sh: test_users pm8,
# as_member, ...), as a hostile local user would use them.
#
#   $HC SOCKET ...     tests/hostile-client.py (needs /usr/bin/python3: need_python)
#   build_suid NAME    compiles tests/prog-suid.c to $T/NAME, root-owned, setuid
. "$(dirname "${BASH_SOURCE[0]}")/daemon-lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/users-lib.sh"
# a hostile client (raw protocol, passed fds) run as any user: the system python
HC="/usr/bin/python3 $PERFMARK_SRC/tests/hostile-client.py"

need_python() { [ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing"; }

build_suid() {
	cc -O1 -o "$T/$1" "$PERFMARK_SRC/tests/prog-suid.c" -I"$PERFMARK_SRC/include" \
		-L"$PERFMARK_BUILD" -lperfmark -Wl,-rpath,"$PERFMARK_BUILD" 2>"$T/cc.log" ||
		die "cannot build the setuid helper" -- "$T/cc.log"
	chown root:root "$T/$1" && chmod 4755 "$T/$1" || die "cannot make $T/$1 setuid root"
}
