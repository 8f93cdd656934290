# Two child processes that each initialize (fake) CUDA and launch, the
# shape of data-parallel workers (RANK 0 and 1, as a launcher sets it):
# each gets its own agent and record file.
# argv: fake libcupti, steps per child.
import os
import subprocess
import sys

here = __file__.rsplit("/", 1)[0]
procs = [subprocess.Popen([sys.executable, here + "/gpu_launch.py", sys.argv[1], sys.argv[2]],
                          stdout=subprocess.DEVNULL, env=dict(os.environ, RANK=str(rank)))
         for rank in range(2)]
sys.exit(max(p.wait() for p in procs))
