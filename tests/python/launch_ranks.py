# SPDX-License-Identifier: MIT
# What torchrun --nproc-per-node N does for a single machine, for a torch
# whose torchrun cannot start here (Debian's 1.13 on Python 3.11): each
# rank a process of its own, told its place by the environment (RANK,
# LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), as torchrun, srun
# and mpirun tell theirs. Exits with the first failing rank's status.
#   python3 launch_ranks.py N SCRIPT ARGS...
#   python3 launch_ranks.py --no-python N COMMAND ARGS...   (as torchrun's)
import os
import socket
import subprocess
import sys


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    argv = sys.argv[1:]
    python = [sys.executable]
    if argv[0] == "--no-python":
        python, argv = [], argv[1:]
    n, script, args = int(argv[0]), argv[1], argv[2:]
    env = dict(os.environ, WORLD_SIZE=str(n), MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()))
    ranks = [subprocess.Popen(python + [script] + args,
                              env=dict(env, RANK=str(r), LOCAL_RANK=str(r)))
             for r in range(n)]
    codes = [p.wait() for p in ranks]
    sys.exit(next((c for c in codes if c), 0))


main()
