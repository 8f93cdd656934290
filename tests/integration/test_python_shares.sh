# test_python.sh's shares (against the target's own clock around each
# call, alone and under a CPU hog), qualnames and lines, on every version.
PYTHON_PART=shares
. tests/integration/test_python.sh
