#!/bin/sh
# Stripped variants of build/tests/libsymtest.so for the symbol and line
# tests:
#   symtest_variant.sh minidebuginfo IN OUT
#       OUT stripped, its functions that .dynsym lacks in an xz-compressed
#       .symtab-only ELF in .gnu_debugdata (Fedora's MiniDebugInfo recipe,
#       https://fedoraproject.org/wiki/Features/MiniDebugInfo)
#   symtest_variant.sh debuglink IN OUT
#       OUT stripped, with a .gnu_debuglink to OUT.debug beside it, which
#       holds the DWARF (objcopy --only-keep-debug) less .debug_aranges, as
#       clang leaves it
# Needs binutils (nm, objcopy, strip) and xz.
set -eu
mode=$1 in=$2 out=$3
tmp=$(mktemp -d /tmp/symtest-variant.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

case "$mode" in
minidebuginfo)
	nm -D --format=posix --defined-only "$in" | awk '{ print $1 }' | sort >"$tmp/dynsyms"
	nm --format=posix --defined-only "$in" |
		awk '$2 == "T" || $2 == "t" { print $1 }' | sort >"$tmp/funcsyms"
	comm -13 "$tmp/dynsyms" "$tmp/funcsyms" >"$tmp/keep"
	objcopy --only-keep-debug "$in" "$tmp/debug"
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols="$tmp/keep" "$tmp/debug" "$tmp/mini"
	xz -q "$tmp/mini"
	strip --strip-all -R .comment -o "$tmp/stripped" "$in"
	objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/stripped" "$out"
	;;
debuglink)
	objcopy --only-keep-debug --remove-section .debug_aranges "$in" "$out.debug"
	strip --strip-all -o "$tmp/stripped" "$in"
	objcopy --add-gnu-debuglink="$out.debug" "$tmp/stripped" "$out"
	;;
*)
	echo "usage: $0 minidebuginfo|debuglink IN OUT" >&2
	exit 2
	;;
esac
