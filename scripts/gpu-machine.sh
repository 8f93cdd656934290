#!/bin/sh
# The GPU checks on a lent GPU machine that has the driver, nvcc and
# PyTorch but not this project's build packages: run from the repository
# root with build/trainsample, build/libtrainsample_cuda.so, build/gpu-check
# (the nvcc-built programs) and .devlib/ (libdw, libelf, libunwind; the
# toolkit's libcupti in .devlib/cupti) brought along. Prints the machine,
# where its CUPTI is, then make gpu-check's checks; with $OUT set, leaves
# the log and the outputs (binaries left out) there. An argument names
# the check script to run instead of all of them (tests/cuda/gpu_check*.sh).
cd "$(dirname "$0")/.." || exit 1
export LD_LIBRARY_PATH=$PWD/.devlib/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
DEST=${OUT:-}
touch build/gpu-check/* 2>/dev/null # newer than their sources: not built again
{
	nvidia-smi
	nvidia-smi -q | grep -iE 'driver version|cuda version|product name' | head -4
	uname -r
	echo "libcupti on this machine:"
	find /usr /opt -name 'libcupti.so*' 2>/dev/null | head -8
	echo "python3: $(command -v python3) $(python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)' 2>&1 | tail -1)"
	# Does the agent find CUPTI by itself? Else the brought one is used.
	rm -rf /tmp/probe && mkdir -p /tmp/probe
	CUDA_INJECTION64_PATH=$PWD/build/libtrainsample_cuda.so TRAINSAMPLE_GPU_DIR=/tmp/probe \
		timeout 60 build/gpu-check/vector_add
	python3 tests/cuda/gpu_records.py summary /tmp/probe/*.gpu
	if ! python3 tests/cuda/gpu_records.py summary /tmp/probe/*.gpu | grep -q 'status started'; then
		echo "the agent found no CUPTI by itself: the brought libcupti is put on the library path"
		export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.devlib/cupti
	fi
	build/trainsample record -q --gpu=on --stats -o /tmp/probe/p.folded -- build/gpu-check/vector_add
	date
	timeout 400 sh "${1:-tests/cuda/gpu_check.sh}"
	date
} 2>&1 | tee /tmp/gpu-machine.log
if [ -n "$DEST" ]; then
	cp /tmp/gpu-machine.log "$DEST/gpu-machine.log"
	# One trace, the GPU flamegraphs, the summaries, the checks' texts.
	tar -czf "$DEST/gpu-check.tar.gz" -C build/gpu-check \
		--exclude='loop*.json' --exclude='attach-*.trace.json' --exclude='raw-*' \
		$(cd build/gpu-check && ls | grep -vxE 'vector_add|kernel_loop|graph|marks|busy|copies|libpylaunch.so')
	tar -czf "$DEST/raw.tar.gz" -C build/gpu-check $(cd build/gpu-check && ls -d raw-* 2>/dev/null)
	ls -la "$DEST"
fi
