# The sources that gcc's ASan/UBSan builds stopped on (false "null
# destination pointer" warnings under -Werror: cli/gpu.c at -O1,
# symbolize/debug_file.c at -O3) compile cleanly with the sanitizers.
. tests/integration/lib.sh

for opt in -O1 -O3; do
	out="$TMP/asan$opt"
	make -s BUILD="$out" CFLAGS="$opt -g -fsanitize=address,undefined" \
		"$out/obj/cli/gpu.o" "$out/obj/symbolize/debug_file.o" >"$TMP/make.log" 2>&1
	rc=$?
	[ $rc -eq 0 ]
	check $? "cli/gpu.c and symbolize/debug_file.c build with ASan/UBSan at $opt under -Werror" \
		"exit $rc: $(grep -m3 -A3 error "$TMP/make.log")"
done
