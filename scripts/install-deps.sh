#!/bin/sh
# Installs the Debian packages trainsample's build, tests and benchmarks need.
# Idempotent and quick when everything is present (one dpkg-query).
#
# libunwind-dev (the GNU libunwind with the remote-unwinding API) conflicts
# with LLVM's libunwind-14-dev, which the base image ships: remove the latter
# first so apt never stops to ask.
set -eu

PKGS="gcc g++ make pkg-config libelf-dev libdw-dev zlib1g-dev libunwind-dev libc6-dbg \
libiberty-dev liblzma-dev binutils xz-utils \
libcriterion-dev lld strace util-linux procps python3-numpy python3-jsonschema python3-torch \
libxml2-utils chromium debootstrap"

missing=""
for p in $PKGS; do
	s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$s" in
	"install ok installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

SUDO=""
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "install-deps: missing packages:$missing; run as root or install them" >&2
		exit 1
	fi
fi

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
if dpkg-query -W -f='${Status}' libunwind-14-dev 2>/dev/null | grep -q 'install ok'; then
	$SUDO apt-get remove -y -q libunwind-14-dev >/dev/null
fi
if ! $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1; then
	$SUDO apt-get update -q >/dev/null
	$SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
