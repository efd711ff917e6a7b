# Thin driver around meson/ninja.  See README.md.
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
SECONDS ?= 60
MESON_OPTS ?=
# make check STRESS=1: the tests run beside a CPU hog pinned on each CPU
STRESS ?= 0

# Debian 12 packages: what perfmark needs to build, install and run the demo
# (make, make install, make demo) ...
DEPS = build-essential clang llvm meson ninja-build pkg-config bpftool python3 \
       libbpf-dev libelf-dev libdw-dev libzstd-dev libjson-c-dev \
       libtracefs-dev libtraceevent-dev \
       protobuf-c-compiler libprotobuf-c-dev zlib1g-dev libmicrohttpd-dev linux-perf
# ... and what the tests add (make check): cmocka, the readers and tools the
# tests check against (hotspot's perfparser, bpftrace, go's pprof, chromium),
# the sanitizer and fuzzer runtimes, the system test's container tools,
# xmllint (the flame graph's SVG must be well-formed XML), tmux (perfmark top driven
# as a user drives it) and prometheus (it scrapes perfmarkd --http in t-http-prometheus).
TEST_DEPS = libcmocka-dev systemtap-sdt-dev hotspot bpftrace zstd time xz-utils binutils \
       libc6-dbg libclang-rt-14-dev golang-go chromium curl systemd-container debootstrap \
       libxml2-utils tmux prometheus
# npm packages the tests load (speedscope), kept out of the tree
NPM_CACHE ?= /var/cache/perfmark-npm
NPM_DEPS = speedscope@1.25.0

.PHONY: all install demo check check-deps bench deps npm-deps bpffs clean unit fuzz

# a PREFIX given to make (make install PREFIX=/opt/perfmark) applies to a
# build/ set up before with another: the binaries are rebuilt, as they
# embed the library's path
all: $(BUILD)/build.ninja
ifneq ($(filter command line environment,$(origin PREFIX)),)
	@[ "$$(meson introspect --buildoptions $(BUILD) | python3 -c 'import json, sys; \
		print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')" = "$(PREFIX)" ] || \
		meson configure $(BUILD) --prefix=$(PREFIX)
endif
	ninja -C $(BUILD)

$(BUILD)/build.ninja:
	meson setup $(BUILD) --prefix=$(PREFIX) $(MESON_OPTS)

install: all
	DESTDIR=$(DESTDIR) meson install -C $(BUILD) --no-rebuild

# install what is missing of a package list, showing apt's progress; stdin
# is /dev/null so a terminal can never stop it
define apt_install
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "make: installing with apt-get:" $$missing; \
		{ apt-get -q update && DEBIAN_FRONTEND=noninteractive apt-get -q install -y $$missing; } </dev/null || exit 1; \
	fi
endef

deps:
	$(call apt_install,$(DEPS))

# everything the tests need, installed before any test runs
check-deps: deps npm-deps
	$(call apt_install,$(TEST_DEPS))
	./tests/nspawn-rootfs.sh

npm-deps:
	@command -v npm >/dev/null || { echo "make: installing with apt-get: npm"; \
		{ apt-get -q update && DEBIAN_FRONTEND=noninteractive apt-get -q install -y npm; } </dev/null; }
	@[ -f $(NPM_CACHE)/node_modules/speedscope/dist/release/index.html ] || { \
		echo "make: npm install $(NPM_DEPS) into $(NPM_CACHE)"; \
		npm install --no-audit --no-fund --prefix $(NPM_CACHE) $(NPM_DEPS) </dev/null; }

bpffs:
	@mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	@mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=true $(MESON_OPTS)

# libFuzzer targets (tests/fuzz): clang, ASan + UBSan, coverage everywhere
$(FUZZ_BUILD)/build.ninja:
	CC=clang meson setup $(FUZZ_BUILD) -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false $(MESON_OPTS)

# make fuzz SECONDS=N: every target N seconds (tests/fuzz/run.sh)
fuzz: check-deps $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD) fuzz
	./tests/fuzz/run.sh $(FUZZ_BUILD) $(SECONDS)

demo: deps bpffs
	$(MAKE) install
	ldconfig
	./examples/demo.sh

check: check-deps bpffs
	rm -rf $(BUILD)-check
	meson setup $(BUILD)-check -Dwerror=true --prefix=$(PREFIX) $(MESON_OPTS)
	ninja -C $(BUILD)-check
	$(MAKE) $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	$(MAKE) $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD) fuzz
	STRESS=$(STRESS) PM_NPM_CACHE=$(NPM_CACHE) PERFMARK_FUZZ_BUILD=$(FUZZ_BUILD) ./tests/run.sh $(BUILD)-check $(ASAN_BUILD) </dev/null

bench: deps bpffs all
	$(call apt_install,time)
	./bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-check $(ASAN_BUILD) $(FUZZ_BUILD)
