# Thin wrapper around meson so that the README's two commands are
# `make demo` and `make test`. Each installs missing build dependencies.

BUILD_DEPS := gcc pkg-config meson ninja-build libcjson-dev libcmocka-dev libssl-dev \
	libseccomp-dev libc-ares-dev
# What the integration tests, the demo and the benchmarks drive.
TEST_DEPS := bubblewrap curl socat python3 openssl openssh-server openssh-client \
	iproute2 netcat-openbsd tmux vim-tiny util-linux bsdutils passwd procps psmisc less \
	podman runc uidmap mmdebstrap python3-yaml python3-jsonschema \
	qemu-system-x86 cpio xz-utils flex bison bc libelf-dev patch

# ward.exe: the cross compiler, and Wine for its tests. Only `make windows`
# and `make windows-test` install them.
WINDOWS_DEPS := gcc-mingw-w64-x86-64 meson ninja-build dpkg-dev
WINDOWS_TEST_DEPS := wine wine64

SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: all deps test-deps build demo test vm-image bench clean install uninstall image windows windows-test

all: build

# Install only what is missing, so a machine that has everything needs no network.
define install_missing
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing:" $$missing; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

deps:
	$(call install_missing,$(BUILD_DEPS))

test-deps: deps
	$(call install_missing,$(TEST_DEPS))

build/build.ninja:
	meson setup build -Dwerror=true

build: deps build/build.ninja
	ninja -C build

# make install [PREFIX=/usr/local] [DESTDIR=]: the ward binary, libward.so
# (with its soname links), include/ward/ward.h, ward.pc for pkg-config and
# the man page, under $(DESTDIR)$(PREFIX). build/ is configured with the
# prefix (ward.pc records it); DESTDIR only moves the files (staging).
PREFIX ?= /usr/local
install: build
	meson configure build -Dprefix=$(abspath $(PREFIX)) >/dev/null
	ninja -C build
	meson install -C build --no-rebuild $(if $(DESTDIR),--destdir "$(abspath $(DESTDIR))")

# The OCI image localhost/ward:latest, offline from the host's Debian
# sources (mmdebstrap + podman import; deploy/image/build.sh); the pod test
# is tests/cluster/ (docs/kubernetes.md).
image: test-deps build
	bash deploy/image/build.sh build/ward

uninstall:
	ninja -C build uninstall

demo: build
	@bash demo/demo.sh build/ward

# The tests and benchmarks need the test-only switches (WARD_TEST_*);
# build/, which the README's commands and users run, never has them.
build-asan/build.ninja:
	meson setup build-asan -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
		-Dtest_hooks=true

build-bench/build.ninja:
	meson setup build-bench -Dbuildtype=release -Dtests=false -Dtest_hooks=true

# The tests run under AddressSanitizer and UndefinedBehaviorSanitizer.
test: test-deps build build-asan/build.ninja
	ninja -C build-asan
	@$(MAKE) --no-print-directory vm-image
	@status=0; ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C build-asan --print-errorlogs --num-processes 2 || status=$$?; \
		python3 tests/known-open.py build-asan/meson-logs/testlog.json; exit $$status

# Tier 3's guest image for the tests and benchmarks, where every user's
# ward looks (/var/lib/ward/vm; $WARD_VM_DIR instead when set), with the
# minimal kernel (VM_KERNEL=stock for Debian's): built once and cached in
# DIR/.cache, about 5 min of CPU (2 cores) the first time, plus the
# linux-source-6.1 download (140 MB); seconds when cached (docs/t3.md).
VM_KERNEL ?= minimal
vm-image:
	@start=$$(date +%s); \
	if $(SUDO) build-asan/ward setup vm --dir "$${WARD_VM_DIR:-/var/lib/ward/vm}" --kernel $(VM_KERNEL); then \
		echo "vm-image: ready in $$(($$(date +%s) - start)) s"; \
	else \
		echo "ward setup vm failed: the tier-3 tests will skip (or fail under WARD_MUST_WORK)"; \
	fi

bench: test-deps build-bench/build.ninja
	ninja -C build-bench
	bash bench/startup.sh build-bench/ward

# ward.exe, cross-compiled with mingw-w64, -Werror (docs/windows.md).
build-win/build.ninja:
	meson setup build-win --cross-file src/windows/cross-mingw64.ini -Dwerror=true

windows:
	$(call install_missing,$(WINDOWS_DEPS))
	@$(MAKE) --no-print-directory build-win/build.ninja
	ninja -C build-win

# The plan layer's unit tests and the plumbing and fail-closed tests, under Wine.
windows-test: windows
	$(call install_missing,$(WINDOWS_TEST_DEPS))
	bash tests/windows/run-wine-tests.sh build-win

clean:
	rm -rf build build-asan build-bench build-clang build-win
