# Thin driver around meson/ninja.  See README.md.
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
ASAN_BUILD ?= build-asan
MESON_OPTS ?=

# Debian 12 packages the build, the tests and the demo need.
DEPS = build-essential clang llvm meson ninja-build pkg-config bpftool \
       libbpf-dev libelf-dev libdw-dev libzstd-dev libjson-c-dev libcmocka-dev \
       systemtap-sdt-dev linux-perf hotspot zstd time python3 bpftrace

.PHONY: all install demo check bench deps bpffs clean unit

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

$(BUILD)/build.ninja:
	meson setup $(BUILD) --prefix=$(PREFIX) $(MESON_OPTS)

install: all
	DESTDIR=$(DESTDIR) meson install -C $(BUILD) --no-rebuild

deps:
	@missing=$$(for p in $(DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi

bpffs:
	@mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	@mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=true $(MESON_OPTS)

demo: deps bpffs
	$(MAKE) install
	ldconfig
	./examples/demo.sh

check: deps bpffs
	rm -rf $(BUILD)-check
	meson setup $(BUILD)-check -Dwerror=true --prefix=$(PREFIX) $(MESON_OPTS)
	ninja -C $(BUILD)-check
	$(MAKE) $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	./tests/run.sh $(BUILD)-check $(ASAN_BUILD)

bench: deps bpffs all
	./bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-check $(ASAN_BUILD)
