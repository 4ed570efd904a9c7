#!/bin/sh
# Runs every measurement of README.md. Outputs: $OUT/LABEL-seedN.jsonl, then
# the table. Usage: sh run.sh [OUT]   (default /tmp/gensim-runs)
set -eu
cd "$(dirname "$0")"
PY=/usr/bin/python3            # the interpreter python3-gensim installs into
DATA=${DATA:-../../../../shared/data}
[ -d "$DATA/ap" ] || DATA=/work/shared/data
OUT=${1:-/tmp/gensim-runs}
CITE=${CITE:-/tmp/citeulike-split}
SEEDS=${SEEDS:-"1 2 3"}
mkdir -p "$OUT"

# the fixed splits: AP's must equal the committed files byte for byte
$PY gensim_lda.py split "$DATA/ap/ap.dat" -out "$OUT/ap-split" -prefix ap -write-test
for f in ap-train.dat ap-test.dat ap-test-obs.dat ap-test-heldout.dat; do
  cmp "$OUT/ap-split/$f" "$DATA/ap/$f"
done
echo "AP split reproduces the committed files"
$PY gensim_lda.py split "$DATA/citeulike-t/mult.dat" -out "$CITE" -prefix citeulike

AP="-train $DATA/ap/ap-train.dat -obs $DATA/ap/ap-test-obs.dat -heldout $DATA/ap/ap-test-heldout.dat"
CU="-train $CITE/citeulike-train.dat -obs $CITE/citeulike-test-obs.dat -heldout $CITE/citeulike-test-heldout.dat"

one() { # label threads args...
  label=$1 threads=$2; shift 2
  for s in $SEEDS; do
    if [ "$threads" = 1 ]; then
      OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
        $PY gensim_lda.py fit "$@" -seed "$s" > "$OUT/$label-seed$s.jsonl"
    else
      env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u MKL_NUM_THREADS \
        $PY gensim_lda.py fit "$@" -seed "$s" > "$OUT/$label-seed$s.jsonl"
    fi
    tail -n +2 "$OUT/$label-seed$s.jsonl"
  done
}

# Hoffman et al.'s online VB settings: batch 256, kappa 0.7, tau0 1024
one ap-k10 1 $AP -k 10
one ap-k50 1 $AP -k 50
one ap-k50-threads default $AP -k 50
one citeulike-k50 1 $CU -k 50
# gensim's own defaults for the schedule: chunksize 2000, decay 0.5, offset 1
one ap-k10-gensimdefaults 1 $AP -k 10 -chunksize 2000 -decay 0.5 -offset 1
# all of gensim's defaults (also eta = 1/K = 0.1 and iterations = 50)
one ap-k10-alldefaults 1 $AP -k 10 -chunksize 2000 -decay 0.5 -offset 1 -eta 0.1 -iterations 50

# schedule variants at K = 10 (one seed), looking for the settings of the
# earlier reference figures (-8.41 after one pass, -8.33 after ten)
SEEDS=1
one ap-k10-b256-k05-t1 1 $AP -k 10 -chunksize 256 -decay 0.5 -offset 1
one ap-k10-b256-k05-t1-eta0.1 1 $AP -k 10 -chunksize 256 -decay 0.5 -offset 1 -eta 0.1
one ap-k10-b256-k07-t64 1 $AP -k 10 -chunksize 256 -decay 0.7 -offset 64
one ap-k10-b100-k07-t1024 1 $AP -k 10 -chunksize 100
one ap-k10-b1000-k05-t1 1 $AP -k 10 -chunksize 1000 -decay 0.5 -offset 1
# the same as ap-k10 but inferring the observed halves with the training
# settings (100 sweeps, mean change 1e-3) instead of 1000 and 1e-6
one ap-k10-evaltrain 1 $AP -k 10 -eval-iterations 100 -eval-gamma-threshold 1e-3

$PY gensim_lda.py table "$OUT"/*.jsonl
