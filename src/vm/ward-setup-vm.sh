#!/bin/sh
# ward setup vm: assemble tier 3's guest image from Debian packages
# (docs/t3.md). Run by `ward setup vm`; arguments: the image directory,
# ward's static guest init, the kernel kind (minimal, stock or auto) and
# the minimal kernel's config fragment (guest-kernel.config; its source
# patch, guest-kernel.patch, is read from the same directory). Idempotent:
# an image whose key (kind, source or package version, kernel config,
# kernel command line, guest init) is already there is kept.
#
#   DIR/<key>/vmlinux      the kernel, uncompressed (QEMU boots it via PVH)
#   DIR/<key>/initrd.img   cpio: /init (ward's guest init) [+ /modules: stock]
#   DIR/<key>/cmdline      the kernel arguments this kernel boots best with
#   DIR/<key>/kernel       what it is ("minimal linux-source-6.1 VERSION ...")
#   DIR/<key>/init.sha256  the guest init's sha256: ward uses only an image
#                          made with its own guest init (src/vm/vm-image.c)
#   DIR/current            -> <key>
#   DIR/.cache/            the downloaded .deb (stock), the built kernels
#                          (minimal: kernel-<version>-<config+patch sha>/vmlinux)
#
# Kinds:
#   minimal  Debian's linux-source-6.1 with guest-kernel.patch, `make
#            tinyconfig` plus the fragment, built once (make -j$WARD_VM_JOBS,
#            default 2; minutes) and cached by source version and the hash
#            of config and patch. Boots in well under a second under TCG.
#   stock    the kernel linux-image-amd64 points at, extracted with dpkg-deb,
#            with its virtio and 9p modules in the initramfs. Nothing to
#            compile; seconds per boot under TCG.
#   auto     minimal when its build tools and source package are available,
#            else stock (saying why).
set -eu

dir=$1
init=$2
kind=${3:-auto}
frag=${4:-}
patchf=${frag%/*}/guest-kernel.patch
pkg=${WARD_VM_KERNEL_PACKAGE:-linux-image-amd64}
srcpkg=${WARD_VM_SOURCE_PACKAGE:-linux-source-6.1}
jobs=${WARD_VM_JOBS:-2}
# Stock kernel: virtio-mmio, virtio-serial, 9p and virtio-net (network
# "proxy"), in load order (no depmod: kmod is not needed).
mods="drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_mmio
drivers/char/virtio_console net/9p/9pnet net/9p/9pnet_virtio fs/netfs/netfs
net/core/failover drivers/net/net_failover drivers/net/virtio_net
fs/fscache/fscache fs/9p/9p"
# The kernel arguments (measured under TCG, docs/t3.md): quiet, no
# self-tests, no mitigations (the guest's own kernel: its processes are the
# command's), the TSC calibration skipped, one UART, no legacy BSD ptys
# (registering 256 pairs was the costliest initcall: 0.1-0.3 s under TCG;
# nothing opens /dev/ptyXX). No "--": QEMU appends virtio_mmio.device=
# after whatever the line ends with.
args_common="console=ttyS0 quiet loglevel=3 reboot=t panic=-1 cryptomgr.notests mitigations=off
tsc_early_khz=2000000 no_timer_check 8250.nr_uarts=1 pty.legacy_count=0 rdinit=/init"
# Not the issue's noapictimer: with ACPI, the PIT as the only clock event
# device never wakes an idle guest here (a sleep 0.3 hung to the timeout).
# The minimal kernel (guest-kernel.patch) takes the local APIC timer's
# period instead of calibrating it for 100 ms: QEMU's emulated APIC counts
# at 1 GHz, so 10^9 / HZ (CONFIG_HZ_100 in the fragment). Dropped under
# KVM (src/vm/vm-engine.c), whose guests have the TSC-deadline timer.
args_minimal="lapic_timer_period=10000000"
args_stock=""

say() { printf 'ward setup vm: %s\n' "$*"; }

case $kind in
minimal | stock | auto) ;;
*) say "unknown kernel kind '$kind' (minimal, stock or auto)"; exit 2 ;;
esac
[ -x "$init" ] || { say "the guest init $init is missing (build ward first)"; exit 1; }
for t in apt-get apt-cache dpkg-deb cpio xz sha256sum; do
	command -v "$t" >/dev/null || { say "needs $t"; exit 1; }
done
command -v qemu-system-x86_64 >/dev/null ||
	say "note: qemu-system-x86_64 is missing; install Debian's qemu-system-x86 to run tier 3"
initfull=$(sha256sum "$init" | cut -d' ' -f1)
initsum=$(echo "$initfull" | cut -c1-12)
# The kernel command line of a kind, as the image's cmdline file has it,
# and its hash (part of the key: a changed line makes a new image).
cmdline_of() { printf '%s\n' "$args_common $1" | tr '\n' ' ' | sed 's/ *$//'; }
argsum_of() { cmdline_of "$1" | sha256sum | cut -c1-12; }

mkdir -p "$dir/.cache"
# One setup at a time per directory; a setup killed outright (SIGKILL)
# leaves only its .setup.* work dir, removed here by the next one: when
# the pid it recorded is gone (or, without one, after two hours).
if command -v flock >/dev/null; then
	exec 9>"$dir/.lock"
	flock 9
fi
for old in "$dir"/.setup.*; do
	[ -d "$old" ] || continue
	if [ -f "$old/pid" ]; then
		kill -0 "$(cat "$old/pid")" 2>/dev/null && continue
	elif [ -z "$(find "$old" -maxdepth 0 -mmin +120)" ]; then
		continue
	fi
	say "removing the leftover $old of an interrupted setup"
	rm -rf "$old"
done
work=$(mktemp -d "$dir/.setup.XXXXXX")
echo $$ >"$work/pid"
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP

# What the minimal kernel's build needs; prints the first thing missing.
minimal_missing() {
	for t in make gcc flex bison bc perl tar xz patch; do
		command -v "$t" >/dev/null || { echo "$t"; return; }
	done
	[ -f /usr/include/libelf.h ] || { echo "libelf-dev"; return; }
	[ -n "$frag" ] && [ -f "$frag" ] || { echo "the config fragment guest-kernel.config"; return; }
	[ -f "$patchf" ] || { echo "the kernel patch $patchf"; return; }
	v=$(apt-cache policy "$srcpkg" 2>/dev/null | awk '/Candidate:/{print $2}')
	[ -n "$v" ] && [ "$v" != "(none)" ] || echo "the package $srcpkg (apt-get update?)"
}
if [ "$kind" = auto ]; then
	miss=$(minimal_missing)
	if [ -z "$miss" ]; then
		kind=minimal
	else
		say "the minimal kernel needs $miss (Debian: apt-get install make gcc flex bison bc"
		say "  patch libelf-dev $srcpkg); using the stock kernel (slower to boot)"
		kind=stock
	fi
elif [ "$kind" = minimal ]; then
	miss=$(minimal_missing)
	[ -z "$miss" ] || { say "the minimal kernel needs $miss; or: ward setup vm --kernel stock"; exit 1; }
fi

# A deb of @1 at version @2 in DIR/.cache, downloaded once; prints its path.
fetch_deb() {
	d=$(ls "$dir/.cache/${1}_"*.deb 2>/dev/null | grep -F "_$(echo "$2" | sed 's/:/%3a/')_" | head -1 || true)
	if [ -z "$d" ]; then
		say "downloading $1 with apt-get download" >&2
		rm -f "$dir/.cache/${1}_"*
		(cd "$dir/.cache" && apt-get download -q "$1=$2" >/dev/null 2>&1) ||
			(cd "$dir/.cache" && apt-get download -q "$1" >/dev/null) ||
			{ say "apt-get download $1 failed" >&2; return 1; }
		d=$(ls "$dir/.cache/${1}_"*.deb | head -1)
	else
		say "using the downloaded $d" >&2
	fi
	echo "$d"
}

# Installs $work/out as DIR/$key, points DIR/current at it, removes the
# older images (a running VM keeps its open files).
install_image() {
	cmdline_of "$1" >"$work/out/cmdline"
	echo >>"$work/out/cmdline"
	echo "$initfull" >"$work/out/init.sha256"
	chmod -R a+rX "$work/out"
	rm -rf "${dir:?}/$key"
	mv "$work/out" "$dir/$key"
	touch "$dir/$key/ready"
	ln -sfn "$key" "$dir/current"
	prune
	say "image ready: $dir/$key"
}

# Keeps the $keep most recently made or set-up images: another ward (another
# version, another guest init) sharing DIR still finds its own (ward picks
# the image made with its guest init, not only DIR/current).
keep=${WARD_VM_KEEP:-3}
prune() {
	n=0
	# shellcheck disable=SC2045 # image names are ward's own keys (no spaces)
	for old in $(ls -t "$dir"/*/ready 2>/dev/null); do
		d=${old%/ready}
		[ -L "$d" ] && continue
		n=$((n + 1))
		[ "$n" -gt "$keep" ] || continue
		say "removing the older image $d"
		rm -rf "$d"
	done
}

already() {
	if [ -f "$dir/$key/ready" ] && [ -f "$dir/$key/cmdline" ] && [ -f "$dir/$key/init.sha256" ]; then
		touch "$dir/$key/ready"
		ln -sfn "$key" "$dir/current"
		say "image $dir/$key is already there"
		exit 0
	fi
}

if [ "$kind" = minimal ]; then
	pver=$(apt-cache policy "$srcpkg" | awk '/Candidate:/{print $2}')
	cfgsum=$(cat "$frag" "$patchf" | sha256sum | cut -c1-12)
	key="minimal-$pver-$cfgsum-$(argsum_of "$args_minimal")-$initsum"
	say "kernel: minimal, $srcpkg $pver, config $frag and its patch ($cfgsum)"
	already
	kdir="$dir/.cache/kernel-$pver-$cfgsum"
	if [ -f "$kdir/vmlinux" ]; then
		say "using the kernel built before: $kdir/vmlinux"
	else
		deb=$(fetch_deb "$srcpkg" "$pver")
		start=$(date +%s)
		say "extracting $srcpkg"
		mkdir -p "$work/src"
		dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards './usr/src/linux-source-*.tar.xz' |
			tar -xJ -C "$work/src" --strip-components=1
		say "patching it: $patchf"
		(cd "$work/src" && patch -p1 --batch --forward) <"$patchf" >"$work/patch.log" 2>&1 ||
			{ cat "$work/patch.log"; say "$patchf does not apply to $srcpkg $pver"; exit 1; }
		say "configuring: make tinyconfig + $(grep -c '^CONFIG_' "$frag") options"
		(cd "$work/src" && make -s ARCH=x86_64 tinyconfig &&
			scripts/kconfig/merge_config.sh -m -O . .config "$frag" &&
			make -s ARCH=x86_64 olddefconfig) >"$work/config.log" 2>&1 ||
			{ tail -20 "$work/config.log"; say "configuring the kernel failed"; exit 1; }
		for l in $(grep -o '^CONFIG_[A-Z0-9_]*=[^ ]*' "$frag"); do
			grep -qx "$l" "$work/src/.config" ||
				{ say "the kernel config lost $l (a dependency is missing)"; exit 1; }
		done
		for l in $(sed -n 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p' "$frag"); do
			! grep -q "^$l=" "$work/src/.config" ||
				{ say "the kernel config has $l, which the fragment turns off"; exit 1; }
		done
		say "building the kernel (make -j$jobs vmlinux: minutes; output in $work/build.log)"
		(cd "$work/src" && make ARCH=x86_64 -j"$jobs" vmlinux) >"$work/build.log" 2>&1 ||
			{ tail -30 "$work/build.log"; say "the kernel build failed"; exit 1; }
		# Built: the kernel and its config move into the cache in one rename.
		mkdir "$work/k"
		cp "$work/src/vmlinux" "$work/src/.config" "$work/k/"
		rm -rf "$work/src"
		rm -rf "$kdir"
		mv "$work/k" "$kdir"
		say "kernel built in $(($(date +%s) - start)) s: $kdir/vmlinux"
		# Kernels of another source version or config are not needed again.
		for old in "$dir"/.cache/kernel-*; do
			[ "$old" = "$kdir" ] || rm -rf "$old"
		done
		rm -f "$deb"
	fi
	say "building the initramfs (ward's guest init alone: no modules)"
	mkdir -p "$work/ir" "$work/out"
	cp "$init" "$work/ir/init"
	(cd "$work/ir" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$work/out/initrd.img"
	cp "$kdir/vmlinux" "$work/out/vmlinux"
	printf 'minimal %s %s config %s\n' "$srcpkg" "$pver" "$cfgsum" >"$work/out/kernel"
	install_image "$args_minimal"
	exit 0
fi

# The stock kernel package the meta-package points at.
kpkg=$pkg
case $pkg in
linux-image-amd64 | linux-image-cloud-amd64)
	kpkg=$(apt-cache depends "$pkg" 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
	[ -n "$kpkg" ] || { say "apt-cache knows no $pkg (apt-get update?)"; exit 1; }
	;;
esac
kver=${kpkg#linux-image-}
pver=$(apt-cache policy "$kpkg" | awk '/Candidate:/{print $2}')

say "kernel: stock, $kpkg $pver (extracted with dpkg-deb)"
# The package is kept (DIR/.cache): a second run downloads nothing.
deb=$(fetch_deb "$kpkg" "$pver")
if [ -s "$deb.config-sum" ]; then
	cfgsum=$(cat "$deb.config-sum")
else
	cfgsum=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO "./boot/config-$kver" | sha256sum | cut -c1-12)
	echo "$cfgsum" >"$deb.config-sum"
fi
key="$kver-$pver-$cfgsum-$(argsum_of "$args_stock")-$initsum"
already

say "extracting the kernel and its 9p/virtio modules"
dpkg-deb -x "$deb" "$work/x"
# The bzImage's xz payload, uncompressed: QEMU boots the ELF through PVH,
# skipping the decompression that costs seconds under TCG.
vmlinuz="$work/x/boot/vmlinuz-$kver"
off=$(LC_ALL=C grep -aboP '\xfd7zXZ\x00' "$vmlinuz" | head -1 | cut -d: -f1)
[ -n "$off" ] || { say "no xz payload in $vmlinuz"; exit 1; }
tail -c +$((off + 1)) "$vmlinuz" | xz -dc >"$work/vmlinux" 2>/dev/null || true
[ "$(head -c 4 "$work/vmlinux" | od -An -c | tr -d ' ')" = '177ELF' ] ||
	{ say "could not extract an ELF kernel from $vmlinuz"; exit 1; }

say "building the initramfs (ward's guest init + $(echo "$mods" | wc -w) modules)"
mkdir -p "$work/ir/modules"
cp "$init" "$work/ir/init"
for m in $mods; do
	ko="$work/x/lib/modules/$kver/kernel/$m.ko"
	[ -f "$ko" ] || { say "module $m missing from $kpkg"; exit 1; }
	cp "$ko" "$work/ir/modules/"
	basename "$ko" >>"$work/ir/modules/order"
done
(cd "$work/ir" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$work/initrd.img"

mkdir -p "$work/out"
mv "$work/vmlinux" "$work/initrd.img" "$work/out/"
printf 'stock %s %s\n' "$kpkg" "$pver" >"$work/out/kernel"
install_image "$args_stock"
