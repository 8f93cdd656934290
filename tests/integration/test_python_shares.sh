# test_python.sh's shares (against the target's own clock around each call, alone and
# under a CPU hog) and consistent stacks (every stack one that could have
# happened) on every version: checks that a neighbour's load would blur,
# which tests/run.sh runs with nothing beside them.
PYTHON_PART=shares
. tests/integration/test_python.sh
