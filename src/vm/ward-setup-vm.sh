#!/bin/sh
# ward setup vm: assemble tier 3's guest image from Debian packages
# (docs/t3.md). Run by `ward setup vm`; arguments: the image directory and
# ward's static guest init. Idempotent: an image whose key (kernel package
# version, kernel config, guest init) is already there is kept.
#
#   DIR/<key>/vmlinux      the stock Debian kernel, uncompressed (PVH boot)
#   DIR/<key>/initrd.img   cpio: /init (ward's guest init) + /modules
#   DIR/current            -> <key>
set -eu

dir=$1
init=$2
pkg=${WARD_VM_KERNEL_PACKAGE:-linux-image-amd64}
# virtio-mmio, virtio-serial, 9p and virtio-net (network "proxy"), in load
# order (no depmod: kmod is not needed).
mods="drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_mmio
drivers/char/virtio_console net/9p/9pnet net/9p/9pnet_virtio fs/netfs/netfs
net/core/failover drivers/net/net_failover drivers/net/virtio_net
fs/fscache/fscache fs/9p/9p"

say() { printf 'ward setup vm: %s\n' "$*"; }

[ -x "$init" ] || { say "the guest init $init is missing (build ward first)"; exit 1; }
for t in apt-get apt-cache dpkg-deb cpio xz sha256sum; do
	command -v "$t" >/dev/null || { say "needs $t"; exit 1; }
done
command -v qemu-system-x86_64 >/dev/null ||
	say "note: qemu-system-x86_64 is missing; install Debian's qemu-system-x86 to run tier 3"

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
initsum=$(sha256sum "$init" | cut -c1-12)

mkdir -p "$dir"
work=$(mktemp -d "$dir/.setup.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

say "kernel: $kpkg $pver (stock Debian kernel, extracted with dpkg-deb)"
# The package is kept (DIR/.cache): a second run downloads nothing.
mkdir -p "$dir/.cache"
deb=$(ls "$dir/.cache/${kpkg}_"*"_amd64.deb" 2>/dev/null | grep -F "_$(echo "$pver" | sed 's/:/%3a/')_" | head -1 || true)
if [ -z "$deb" ]; then
	say "downloading $kpkg with apt-get download"
	rm -f "$dir/.cache/${kpkg}_"*
	(cd "$dir/.cache" && apt-get download -q "$kpkg=$pver" >/dev/null 2>&1) ||
		(cd "$dir/.cache" && apt-get download -q "$kpkg" >/dev/null) ||
		{ say "apt-get download $kpkg failed"; exit 1; }
	deb=$(ls "$dir/.cache/${kpkg}_"*"_amd64.deb" | head -1)
else
	say "using the downloaded $deb"
fi
if [ -s "$deb.config-sum" ]; then
	cfgsum=$(cat "$deb.config-sum")
else
	cfgsum=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO "./boot/config-$kver" | sha256sum | cut -c1-12)
	echo "$cfgsum" >"$deb.config-sum"
fi
key="$kver-$pver-$cfgsum-$initsum"
if [ -f "$dir/$key/ready" ]; then
	ln -sfn "$key" "$dir/current"
	say "image $dir/$key is already there"
	exit 0
fi

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
printf '%s\n' "$kpkg $pver" >"$work/out/kernel"
chmod -R a+rX "$work/out"
rm -rf "${dir:?}/$key"
mv "$work/out" "$dir/$key"
touch "$dir/$key/ready"
ln -sfn "$key" "$dir/current"
# Older images (another kernel or guest init): a running VM keeps its open files.
for old in "$dir"/*/ready; do
	[ -f "$old" ] || continue
	d=${old%/ready}
	[ -L "$d" ] && continue
	[ "$d" = "$dir/$key" ] || { say "removing the older image $d"; rm -rf "$d"; }
done
say "image ready: $dir/$key"
