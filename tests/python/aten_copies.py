# SPDX-License-Identifier: MIT
# A loop that calls stand-ins for ATen (tests/fake_aten) through ctypes:
# "copies" spends 20 ms of 50 (CPU) converting its batch (at::native::_to_copy)
# and 30 computing (at::native::addmm); "compute" spends all 50 computing.
#   aten_copies.py LIB copies|compute SECONDS
import ctypes
import sys
import time

lib = ctypes.CDLL(sys.argv[1])
lib.fake_aten_to.argtypes = lib.fake_aten_addmm.argtypes = [ctypes.c_double]
copies = sys.argv[2] == "copies"


def convert_batch():
    lib.fake_aten_to(0.020)


def main():
    end = time.monotonic() + float(sys.argv[3])
    while time.monotonic() < end:
        if copies:
            convert_batch()
        lib.fake_aten_addmm(0.030 if copies else 0.050)


main()
