#!/bin/sh
# The folders' dependencies go one way (docs/design.md): each folder
# includes only the public header of the folders it may use. A source that
# reaches past them fails here with the line that does it.
. "$(dirname "$0")/lib.sh"

sampler_uses="common/common.h formats/formats.h symbolize/symbolize.h symbolize/python/python.h syscall_names.h"

# folder: the headers of other folders it may include
allowed() {
	case "$1" in
	common) echo "" ;;
	symbolize/python) echo "common/common.h" ;;
	symbolize) echo "common/common.h" ;;
	formats) echo "common/common.h" ;;
	cuda/agent) echo "common/common.h symbolize/python/python.h cuda/gpu_record.h" ;;
	cuda) echo "common/common.h formats/formats.h symbolize/symbolize.h" ;;
	# sampler/ may include the header of its CPython tick
	sampler) echo "$sampler_uses" sampler/python/*.h ;;
	# the CPython tick: what sampler/ may use, and sampler/'s own headers
	sampler/python) echo "$sampler_uses" sampler/*.h ;;
	analysis) echo "common/common.h formats/formats.h" ;;
	cli) echo "common/common.h formats/formats.h sampler/sampler.h cuda/gpu.h analysis/analysis.h" ;;
	*) echo "?" ;;
	esac
}

bad=""
files=0
for dir in common symbolize/python symbolize formats cuda/agent cuda sampler sampler/python analysis cli; do
	ok_list=$(allowed "$dir")
	for f in "$dir"/*.c "$dir"/*.h; do
		[ -f "$f" ] || continue
		files=$((files + 1))
		for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
			case "$inc" in "$dir"/*) [ "$(dirname "$inc")" = "$dir" ] && continue ;; esac
			case " $ok_list " in *" $inc "*) continue ;; esac
			bad="$bad $f:$inc"
		done
	done
done
[ -z "$bad" ] && [ "$files" -gt 50 ]
check $? "layers: every source includes only what its folder may use" "$files sources;${bad# }" "$files sources"

# No folder but cli/ includes the sampler's header.
users=$(grep -l '#include "sampler/' $(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]') 2>/dev/null |
	grep -v '^sampler/\|^cli/\|^tests/' | tr '\n' ' ')
[ -z "$users" ]
check $? "layers: only cli/ uses sampler/" "$users"
