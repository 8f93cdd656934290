#!/bin/sh
# Builds a minimal Debian sid root for the CPython 3.14 and 3.15 tests
# (make sid-root, make sid-root-torch): the host's own packages and apt
# sources stay as they are; sid lives only in DIR.
#   scripts/sid-root.sh DIR          python3.14, python3.15, their headers, numpy
#   scripts/sid-root.sh DIR torch    and python3-torch, transformers, accelerate (for 3.14)
# Done once: DIR/.stamp (or DIR/.stamp-torch) marks a finished build, and a
# run that finds it does nothing. A failed build leaves no stamp and says
# why; the tests then skip the root's interpreters.
set -eu
dir=$1
what=${2:-base}
mirror=${SID_MIRROR:-http://deb.debian.org/debian}
# The interpreters, their internal headers (scripts/gen-python-layouts.sh
# reads them) and numpy for the --native tests.
base_pkgs=python3.14,python3.15,libpython3.14-dev,libpython3.15-dev,python3-numpy

if [ "$(id -u)" != 0 ]; then
	echo "sid-root: needs root (debootstrap and chroot)" >&2
	exit 1
fi

if [ ! -f "$dir/.stamp" ]; then
	command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || {
		echo "sid-root: debootstrap is not installed (apt-get install debootstrap)" >&2
		exit 1
	}
	# Into a fresh folder beside DIR, moved in place when complete: an
	# interrupted build never looks finished.
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp"
	start=$(date +%s)
	if ! PATH=$PATH:/usr/sbin debootstrap --variant=minbase --include="$base_pkgs" \
		sid "$dir.tmp" "$mirror" >"$dir.log" 2>&1; then
		echo "sid-root: debootstrap failed (no network?); see $dir.log:" >&2
		tail -5 "$dir.log" >&2
		rm -rf "$dir.tmp"
		exit 1
	fi
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	touch "$dir/.stamp"
	echo "sid-root: $dir built in $(( $(date +%s) - start )) s, $(du -sh "$dir" | cut -f1)" >&2
fi

if [ "$what" = torch ] && [ ! -f "$dir/.stamp-torch" ]; then
	start=$(date +%s)
	# apt inside the root, under its own /proc; the host's apt is not used.
	# The mirror may be a snapshot whose Release has expired (debootstrap
	# does not check that; apt does): its date is not checked either.
	if ! unshare --mount --pid --fork sh -c '
		mount -t proc proc "$1/proc" &&
		chroot "$1" sh -c "apt-get -o Acquire::Check-Valid-Until=false update &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y \
			--no-install-recommends python3-torch python3-transformers python3-accelerate"' \
		sh "$dir" >"$dir.torch.log" 2>&1; then
		echo "sid-root: installing python3-torch failed; see $dir.torch.log:" >&2
		tail -5 "$dir.torch.log" >&2
		exit 1
	fi
	touch "$dir/.stamp-torch"
	echo "sid-root: python3-torch added in $(( $(date +%s) - start )) s, root now $(du -sh "$dir" | cut -f1)" >&2
fi
