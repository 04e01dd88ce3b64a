# Top-level driver: CMake builds into build/, CTest runs the tests.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure test demo clean install

all: configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	./scripts/deps.sh

configure: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

test: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_FLAGS)

# Installs the library, headers, homa.pc, the CMake package, the tools and
# the man pages under PREFIX (GNUInstallDirs layout; DESTDIR is honoured).
PREFIX ?= /usr/local
install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

# Debian packages libhoma1, libhoma-dev, homa-tools in build-deb/;
# deb-test also installs them here, checks them and purges them (root).
.PHONY: deb deb-test
deb: deps
	./scripts/deb.sh build
deb-test: deps
	./scripts/deb.sh test

demo: all
	./scripts/demo.sh $(BUILD)

clean:
	rm -rf $(BUILD)

# homa-sim: regenerate docs/sim (W1..W5 at 80% load, classic and START_MSG).
.PHONY: sim-paper
sim-paper: all
	tools/sim/paper.sh $(BUILD) docs/sim

# Homa against kernel TCP on the emulated datacenter (needs root; see
# docs/RESULTS.md). TESTBED_FLAGS passes options, e.g. --rate 200.
TESTBED_FLAGS ?=
.PHONY: bench-testbed
bench-testbed: all
	./scripts/testbed --build $(BUILD) $(TESTBED_FLAGS) run all

# AF_XDP driver against the UDP driver and TCP on a veth pair (root;
# docs/XDP.md): writes build/bench-xdp.json and prints the table.
.PHONY: bench-xdp
bench-xdp: all
	./scripts/bench-xdp.sh $(BUILD)

# Hardening (docs/HARDENING.md): libFuzzer targets, sanitizer builds, soak.
FUZZ_BUILD ?= build-fuzz
.PHONY: fuzz fuzz-smoke sanitize
fuzz: deps
	./scripts/fuzz.sh build $(FUZZ_BUILD)

fuzz-smoke: deps
	./scripts/fuzz.sh smoke 60 $(FUZZ_BUILD)

sanitize: deps
	./scripts/sanitize.sh build-sanitize

# CI's second half (.ci/run runs it after `make test`): a gcc Release
# build with -Werror (the optimiser warns about more), the whole suite
# built with clang -Wall -Wextra -Werror, again with clang ASan+UBSan
# (LeakSanitizer on), and the threaded tests under TSan, each in its own
# build directory under CI_EXTRA_BUILD (docs/HARDENING.md section 2).
CI_EXTRA_BUILD ?= build-ci-extra
.PHONY: ci-extra
ci-extra: deps
	./scripts/sanitize.sh $(CI_EXTRA_BUILD) release clang asan tsan

SOAK_SECS ?= 60
.PHONY: soak
soak: deps
	./scripts/soak.sh $(SOAK_SECS)
