# test_python.sh's consistent stacks (every stack one that could have
# happened) on every version: a neighbour's load stretches a walk of a
# running thread (beside another script: 5 of 3704 and 6 of 3855
# impossible, against 0.1% at most), so tests/run.sh runs it with nothing
# beside it.
PYTHON_PART=consistent
. tests/integration/test_python.sh
