# A short libFuzzer run on the .tsprof reader and every writer (`make fuzz`
# runs longer), after the saved regression inputs.
. tests/integration/lib.sh
if ! command -v clang >/dev/null; then
	skip "fuzz: the .tsprof reader and every writer" "no clang for libFuzzer"
elif ! make -s build/fuzz/fuzz_tsprof >"$TMP/build.log" 2>&1; then
	not_ok "fuzz: the fuzzer builds" "$(tail -3 "$TMP/build.log")"
else
	sh tests/fuzz/run.sh "${FUZZ_SECONDS:-10}"
fi
