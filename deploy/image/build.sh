#!/usr/bin/env bash
# make image: the OCI image localhost/ward:latest, built offline from the
# host's Debian sources (no image registry): mmdebstrap makes a minimal
# bookworm root file system with ward's run-time packages, ward's build is
# copied in, and podman import turns the tarball into an image (with PATH
# set: an imported image has no configuration). deploy/image/Containerfile
# is the same layout built the ordinary way from debian:bookworm-slim.
#   deploy/image/build.sh [WARD_BINARY]      (default: build/ward)
# WARD_IMAGE overrides the tag.
set -euo pipefail
ward=${1:-build/ward}
tag=${WARD_IMAGE:-localhost/ward:latest}
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$ward" ] || { echo "build.sh: no ward binary at '$ward' (make build)" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "build.sh: mmdebstrap is missing (apt-get install mmdebstrap)" >&2; exit 1; }
command -v podman >/dev/null || { echo "build.sh: podman is missing (apt-get install podman)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The packages: ward's run-time libraries (packages.txt, one a line, shared
# with the Containerfile) and nothing else beyond minbase.
pkgs=$(grep -v '^#' "$here/packages.txt" | paste -sd, -)
mmdebstrap --quiet --variant=minbase --include="$pkgs" \
	--customize-hook="copy-in '$ward' /usr/local/bin" \
	--customize-hook='chmod 0755 "$1/usr/local/bin/ward"' \
	--customize-hook='mkdir -p "$1/etc/ward" "$1/workspace"' \
	--customize-hook='chroot "$1" useradd --uid 1000 --user-group --create-home --shell /bin/sh agent' \
	--customize-hook='chown 1000:1000 "$1/workspace"' \
	--customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*' \
	bookworm "$tmp/rootfs.tar"
podman import --quiet \
	--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	--change 'ENV HOME=/root' \
	--change 'WORKDIR /workspace' \
	--change 'CMD ["sleep", "infinity"]' \
	"$tmp/rootfs.tar" "$tag" >/dev/null
echo "$tag"
