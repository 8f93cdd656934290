# test_python.sh's checks on Python 3.8 to 3.10 and Debian's 3.11,
# with Debian's numpy, a native program and the refused versions: the
# older half, which tests/run.sh runs beside the newer.
PYTHON_PART=older
. tests/integration/test_python.sh
