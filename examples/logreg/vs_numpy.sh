#!/usr/bin/env bash
# vs_numpy.sh: the Laplace fit of Bayesian logistic regression on Yeast
# label Class1 (1,500 × 104 with the intercept): vigen's generated fit, a
# hand-written Go Newton, and numpy's Newton (newton.py, OpenBLAS on one
# thread), alternating ROUNDS times (default 3) in one run. Milliseconds per
# fit, one core each (go test -cpu 1; OPENBLAS_NUM_THREADS=1); the CPU
# time of vigen's fit alone (the model built once, as numpy's fit takes its
# arrays) is the number to set beside numpy's:
#
#   examples/logreg/vs_numpy.sh            # from the repository root
#
# needs ../shared/data/yeast and python3 with numpy (Debian: python3-numpy,
# libopenblas0-pthread).
set -euo pipefail
ROUNDS=${ROUNDS:-3}
CSV=${CSV:-../shared/data/yeast/train.csv}
PY=${PY:-python3}
[ -r "$CSV" ] || { echo "vs_numpy.sh: $CSV is missing (the shared data sets live next to the repository)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/logreg.test" ./examples/logreg
for r in $(seq "$ROUNDS"); do
	(cd examples/logreg && "$work/logreg.test" -test.run '^$' -test.bench 'BenchmarkLaplaceFit' -test.benchtime 100x -test.cpu 1) |
		awk '/^BenchmarkLaplaceFit/ {sub("BenchmarkLaplaceFit/", "", $1); cpu = ""; for (i = 4; i < NF; i++) if ($(i+1) == "cpu-ms/op") cpu = sprintf(", %.2f ms CPU", $i); printf "round %d  %-16s %7.2f ms wall per fit%s\n", '"$r"', $1, $3 / 1e6, cpu}'
	OPENBLAS_NUM_THREADS=1 "$PY" examples/logreg/newton.py "$CSV" Class1 100 | sed "s/^/round $r  /"
done
