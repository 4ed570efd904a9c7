#!/usr/bin/env bash
# peers.sh: CPU seconds per EM iteration of vigen's CTM and LDA against
# ctm-c and lda-c (Blei's C programs) on the AP training documents, run side
# by side and alternating, since this kind of machine is noisy.
#
#   CTM_C=/path/to/ctm LDA_C=/path/to/lda examples/peers.sh [K ...]
#
# Run from the repository root; either binary may be left out (its rows are
# skipped). ctm-c and lda-c are built from their public sources (ctm-c needs
# GSL: Debian's libgsl-dev). Each program is run for 1 and for 1+ITERS EM
# iterations (ITERS, default 3) from the same start, REPEAT times (default
# 2), alternating; a row is (CPU(1+ITERS) − CPU(1)) / ITERS, the mean over
# the repeats, user + system seconds from /usr/bin/time, so set-up and the
# first iteration cancel out. Peak resident memory is from the longer runs.
# The data is ../shared/data/ap (see its README).
set -euo pipefail

ITERS=${ITERS:-3}
REPEAT=${REPEAT:-2}
AP=${AP:-../shared/data/ap/ap-train.dat}
KS=("$@")
[ ${#KS[@]} -gt 0 ] || KS=(10 50)
[ -r "$AP" ] || { echo "peers.sh: $AP is missing (the shared data sets live next to the repository)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "peers.sh: needs GNU time at /usr/bin/time" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/ctm" ./examples/ctm
go build -o "$work/lda" ./examples/lda

# cpu FILE: user+sys seconds and max RSS (kB) from a /usr/bin/time -v log
cpu() { awk -F': ' '/User time/{u=$2} /System time/{s=$2} /Maximum resident/{m=$2} END{printf "%.3f %d\n", u+s, m}' "$1"; }

# timed NAME CMD...: runs CMD under /usr/bin/time -v, output discarded
timed() {
	local log="$work/$1.time"; shift
	/usr/bin/time -v -o "$log" "$@" >/dev/null 2>&1 || true
	cpu "$log"
}

ctmc_settings() { # ctm-c's defaults (its README) with em max iter $1
	printf 'em max iter %d\nvar max iter 20\ncg max iter -1\nem convergence 1e-3\nvar convergence 1e-6\ncg convergence 1e-6\nlag 10\ncovariance estimate mle\n' "$1" >"$work/ctm-$1.txt"
	echo "$work/ctm-$1.txt"
}
ldac_settings() { # lda-c's settings.txt with em max iter $1 (em convergence 0: run them all)
	printf 'var max iter 20\nvar convergence 1e-6\nem max iter %d\nem convergence 0\nalpha estimate\n' "$1" >"$work/lda-$1.txt"
	echo "$work/lda-$1.txt"
}

# once PROGRAM K N: CPU seconds and peak RSS of N EM iterations
once() {
	local prog=$1 K=$2 n=$3
	case $prog in
	vigen-ctm) timed "$prog$n" "$work/ctm" -train "$AP" -K "$K" -maxiter "$n" -tol 0 -q ;;
	ctm-c) rm -rf "$work/c$n"; timed "$prog$n" "$CTM_C" est "$AP" "$K" seed "$work/c$n" "$(ctmc_settings "$n")" ;;
	vigen-lda) timed "$prog$n" "$work/lda" -train "$AP" -K "$K" -maxiter "$n" -tol 0 -q ;;
	lda-c) rm -rf "$work/d$n"; timed "$prog$n" "$LDA_C" est 0.1 "$K" "$(ldac_settings "$n")" "$AP" random "$work/d$n" ;;
	esac
}

progs=(vigen-ctm)
[ -n "${CTM_C:-}" ] && progs+=(ctm-c)
progs+=(vigen-lda)
[ -n "${LDA_C:-}" ] && progs+=(lda-c)
for K in "${KS[@]}"; do
	declare -A sum=() rss=()
	for r in $(seq "$REPEAT"); do
		for prog in "${progs[@]}"; do # alternating: every program once per round
			a=$(once "$prog" "$K" 1)
			b=$(once "$prog" "$K" $((1 + ITERS)))
			sum[$prog]=$(awk -v s="${sum[$prog]:-0}" -v a="${a% *}" -v b="${b% *}" -v i="$ITERS" 'BEGIN{print s + (b - a) / i}')
			rss[$prog]=${b#* }
		done
	done
	for prog in "${progs[@]}"; do
		awk -v p="$prog" -v k="$K" -v s="${sum[$prog]}" -v r="$REPEAT" -v m="${rss[$prog]}" \
			'BEGIN{printf "%-10s K=%-3d %8.3f CPU s per EM iteration   peak %6.0f MB\n", p, k, s / r, m / 1024}'
	done
	unset sum rss
done
