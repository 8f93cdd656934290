#!/bin/sh
# Runs a program of the Debian sid root (make sid-root) the way a container
# runs it: in its own mount namespace, chrooted into the root, with /proc,
# /dev, /tmp and the current folder bound in at the same paths, so the
# tests' scripts and temporary files are where they are on the host. The
# PID namespace is the host's (tids need no mapping). Every step execs:
# the process the caller started becomes the program, so `record --` and
# `$!` see the program's pid. The mounts vanish with the namespace.
#   tests/sid/run-in-root.sh PROGRAM [ARG...]   (PROGRAM as the root names it)
root=${SID_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)/build/sid-root}
if [ ! -f "$root/.stamp" ]; then
	echo "run-in-root: no sid root at $root (make sid-root)" >&2
	exit 127
fi
exec unshare --mount sh -c '
	root=$1; shift
	mkdir -p "$root$PWD" &&
	mount -t proc proc "$root/proc" &&
	mount --bind /dev "$root/dev" &&
	mount --bind /tmp "$root/tmp" &&
	mount --bind "$PWD" "$root$PWD" &&
	exec chroot "$root" sh -c "cd \"\$0\" && exec \"\$@\"" "$PWD" "$@"' sh "$root" "$@"
