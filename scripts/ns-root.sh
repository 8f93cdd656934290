#!/bin/sh
# Builds DIR (default build/ns-root): a Debian bullseye root for the
# container tests (tests/integration/test_containers.sh). Its glibc (2.31)
# and Python (3.9, in /usr/bin/python3.9) differ from the host's bookworm
# ones, so a profile that names their symbols read the root's files. Needs
# root, debootstrap and the Debian mirror; about 45 s and 250 MB. Quick when
# DIR is there; a failed build leaves nothing behind.
set -eu
dir=${1:-build/ns-root}
[ -x "$dir/usr/bin/python3.9" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "ns-root: debootstrap needs root" >&2
	exit 1
fi
command -v debootstrap >/dev/null 2>&1 || { echo "ns-root: no debootstrap (apt-get install debootstrap)" >&2; exit 1; }
mirror=$(awk '$1 == "URIs:" { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
mkdir -p "$(dirname "$dir")"
rm -rf "$dir.tmp"
echo "ns-root: debootstrap bullseye into $dir (log: $dir.log)" >&2
if ! debootstrap --variant=minbase --include=python3-minimal,libpython3.9-stdlib \
		bullseye "$dir.tmp" "$mirror" >"$dir.log" 2>&1; then
	rm -rf "$dir.tmp"
	echo "ns-root: debootstrap failed; see $dir.log" >&2
	exit 1
fi
mv "$dir.tmp" "$dir"
