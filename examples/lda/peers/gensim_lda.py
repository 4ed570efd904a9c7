#!/usr/bin/env python3
"""Peer baseline for stochastic variational inference on LDA: gensim's LdaModel
(online variational Bayes, Hoffman, Blei and Bach 2010) trained on an LDA-C
corpus and scored by document completion with the same protocol as
examples/lda (see README.md next to this file and ../shared/data/README.md).

Two subcommands:

  split  make the fixed split of one LDA-C corpus (data README, rules 1 and 2)
  fit    train LdaModel and report CPU seconds, documents per CPU second and
         held-out per-word log likelihood after chosen passes

Run it with the system interpreter that has python3-gensim:
/usr/bin/python3 gensim_lda.py ...
"""

import argparse
import hashlib
import json
import math
import os
import sys
import time


# ---------------------------------------------------------------- LDA-C I/O


def read_lines(path):
    """Return the lines of path as bytes, without line ends. A final line end
    is optional (citeulike-t/mult.dat has none)."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for i, line in enumerate(lines):
        if line.endswith(b"\r"):
            raise ValueError("%s:%d: CR line end; expected LF only" % (path, i + 1))
    return lines


def parse_line(line, path, lineno):
    """Parse one LDA-C line 'M id:count ...' into a list of (id, count) pairs
    in the order listed."""
    fields = line.split()
    if not fields:
        raise ValueError("%s:%d: empty line; an empty document is the line 0" % (path, lineno))
    try:
        m = int(fields[0])
    except ValueError:
        raise ValueError("%s:%d: first field %r is not a term count" % (path, lineno, fields[0]))
    if m != len(fields) - 1:
        raise ValueError("%s:%d: says %d terms but lists %d" % (path, lineno, m, len(fields) - 1))
    pairs = []
    seen = set()
    for fld in fields[1:]:
        try:
            a, b = fld.split(b":")
            w, c = int(a), int(b)
        except ValueError:
            raise ValueError("%s:%d: %r is not id:count" % (path, lineno, fld))
        if w < 0 or c < 1:
            raise ValueError("%s:%d: %r: ids are >= 0 and counts >= 1" % (path, lineno, fld))
        if w in seen:
            raise ValueError("%s:%d: id %d listed twice" % (path, lineno, w))
        seen.add(w)
        pairs.append((w, c))
    return pairs


def read_ldac(path):
    return [parse_line(l, path, i + 1) for i, l in enumerate(read_lines(path))]


def format_doc(counts):
    """LDA-C line for a dict id -> count, ids ascending."""
    ids = sorted(counts)
    return " ".join([str(len(ids))] + ["%d:%d" % (w, counts[w]) for w in ids])


# ---------------------------------------------------------------- split


def halve(pairs):
    """Rule 2: expand pairs in listed order into tokens; even-numbered tokens
    go to the observed half, odd ones to the held-out half."""
    obs, held = {}, {}
    j = 0
    for w, c in pairs:
        for _ in range(c):
            half = obs if j % 2 == 0 else held
            half[w] = half.get(w, 0) + 1
            j += 1
    return obs, held


def cmd_split(args):
    lines = read_lines(args.corpus)
    os.makedirs(args.out, exist_ok=True)
    names = {
        "train": "%s-train.dat" % args.prefix,
        "test": "%s-test.dat" % args.prefix,
        "obs": "%s-test-obs.dat" % args.prefix,
        "held": "%s-test-heldout.dat" % args.prefix,
    }
    out = {k: [] for k in names}
    ntok = {k: 0 for k in names}
    for i, line in enumerate(lines):
        pairs = parse_line(line, args.corpus, i + 1)
        n = sum(c for _, c in pairs)
        if i % 5 != 4:  # rule 1: lines copied unchanged
            out["train"].append(line)
            ntok["train"] += n
            continue
        out["test"].append(line)
        ntok["test"] += n
        obs, held = halve(pairs)
        out["obs"].append(format_doc(obs).encode())
        out["held"].append(format_doc(held).encode())
        ntok["obs"] += sum(obs.values())
        ntok["held"] += sum(held.values())
    for k, name in names.items():
        if k == "test" and not args.write_test:
            continue
        path = os.path.join(args.out, name)
        data = b"".join(l + b"\n" for l in out[k])
        with open(path, "wb") as f:
            f.write(data)
        print("%s  %s  %d documents  %d tokens" % (
            hashlib.sha256(data).hexdigest(), path, len(out[k]), ntok[k]))


# ---------------------------------------------------------------- evaluation


def seen_terms(train, v):
    seen = [False] * v
    for doc in train:
        for w, _ in doc:
            seen[w] = True
    return seen


def keep_seen(docs, seen):
    """Drop the terms that never occur in training (ids beyond V included).
    Returns the kept docs and the number of dropped tokens."""
    v = len(seen)
    kept, dropped = [], 0
    for doc in docs:
        k = []
        for w, c in doc:
            if w < v and seen[w]:
                k.append((w, c))
            else:
                dropped += c
        kept.append(k)
    return kept, dropped


class HeldoutEval:
    """Document completion: infer q(theta_d) = Dirichlet(gamma_d) for each
    observed half with the model's topics held fixed (LdaModel.inference,
    which uses expElogbeta = exp(E[log beta]) under q(beta) = Dirichlet(lambda)),
    then score each held-out token w of document d with
    log sum_k E[theta_dk] E[beta_kw], E[theta_dk] = gamma_dk / sum_j gamma_dj,
    E[beta_kw] = lambda_kw / sum_v lambda_kv."""

    def __init__(self, np, train, obs, held, v, iterations, threshold, seed):
        if len(obs) != len(held):
            raise ValueError("%d observed halves and %d held-out halves; they must be line-aligned"
                             % (len(obs), len(held)))
        self.np = np
        seen = seen_terms(train, v)
        self.obs, self.dropped_obs = keep_seen(obs, seen)
        held, self.dropped_held = keep_seen(held, seen)
        self.held_ids = [np.array([w for w, _ in d], dtype=np.int64) for d in held]
        self.held_cts = [np.array([c for _, c in d], dtype=np.float64) for d in held]
        self.scored = int(sum(c.sum() for c in self.held_cts))
        self.iterations = iterations
        self.threshold = threshold
        self.seed = seed

    def score(self, model):
        np = self.np
        # inference draws gamma's start from model.random_state and reads
        # model.iterations / gamma_threshold: use our own for the evaluation
        # and restore the training ones, so evaluating does not change training
        saved = (model.random_state, model.iterations, model.gamma_threshold)
        model.random_state = np.random.RandomState(self.seed)
        model.iterations, model.gamma_threshold = self.iterations, self.threshold
        try:
            gamma, _ = model.inference(self.obs)
        finally:
            model.random_state, model.iterations, model.gamma_threshold = saved
        gamma = gamma.astype(np.float64)
        theta = gamma / gamma.sum(axis=1, keepdims=True)
        lam = model.state.get_lambda().astype(np.float64)
        beta = lam / lam.sum(axis=1, keepdims=True)
        total = 0.0
        for d in range(len(self.held_ids)):
            ids = self.held_ids[d]
            if len(ids) == 0:
                continue
            p = theta[d] @ beta[:, ids]
            total += float(self.held_cts[d] @ np.log(p))
        return total / self.scored


# ---------------------------------------------------------------- fit


def cmd_fit(args):
    import numpy as np
    import gensim
    from gensim.models import LdaModel
    from gensim.models.callbacks import Metric

    train = read_ldac(args.train)
    obs = read_ldac(args.obs)
    held = read_ldac(args.heldout)
    v = 1 + max(w for doc in train for w, _ in doc)
    d_train = len(train)
    k = args.k
    report = sorted(set(args.report))
    passes = max(report)

    ev = HeldoutEval(np, train, obs, held, v, args.eval_iterations, args.eval_gamma_threshold,
                     args.seed + 1)
    info = {
        "gensim": gensim.__version__, "numpy": np.__version__,
        "train": args.train, "D_train": d_train, "V": v,
        "train_tokens": sum(c for doc in train for _, c in doc),
        "test_docs": len(obs),
        "K": k, "alpha": args.alpha, "eta": args.eta, "chunksize": args.chunksize,
        "decay": args.decay, "offset": args.offset, "passes": passes,
        "iterations": args.iterations, "gamma_threshold": args.gamma_threshold,
        "eval_iterations": args.eval_iterations, "eval_gamma_threshold": args.eval_gamma_threshold,
        "dtype": args.dtype, "seed": args.seed,
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        "scored_heldout_tokens": ev.scored,
        "dropped_heldout_tokens": ev.dropped_held,
        "dropped_obs_tokens": ev.dropped_obs,
    }
    print(json.dumps(info), flush=True)

    # Evaluate at the end of the chosen passes from inside one training run
    # (gensim calls callbacks at the end of every pass). The time spent
    # evaluating is measured and subtracted from the training time.
    clock = {"cpu": 0.0, "wall": 0.0, "pass": 0}
    rows = []

    class AtPasses(Metric):
        logger = None
        title = "heldout"

        def __str__(self):
            return "heldout"

        def get_value(self, **kwargs):
            c0, w0 = time.process_time(), time.perf_counter()
            clock["pass"] += 1
            p = clock["pass"]
            if p in report:
                cpu = c0 - clock["cpu0"] - clock["cpu"]
                wall = w0 - clock["wall0"] - clock["wall"]
                h = ev.score(kwargs["model"])
                row = {"K": k, "passes": p, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
                       "docs_per_cpu_s": round(d_train * p / cpu, 1),
                       "docs_per_wall_s": round(d_train * p / wall, 1),
                       "heldout_per_word": round(h, 4)}
                rows.append(row)
                print(json.dumps(row), flush=True)
            clock["cpu"] += time.process_time() - c0
            clock["wall"] += time.perf_counter() - w0
            return 0.0

    id2word = {i: str(i) for i in range(v)}
    dtype = {"float32": np.float32, "float64": np.float64}[args.dtype]
    clock["cpu0"], clock["wall0"] = time.process_time(), time.perf_counter()
    model = LdaModel(
        corpus=train, id2word=id2word, num_topics=k,
        alpha=[args.alpha] * k, eta=args.eta,
        chunksize=args.chunksize, decay=args.decay, offset=args.offset,
        passes=passes, update_every=1, eval_every=None,
        iterations=args.iterations, gamma_threshold=args.gamma_threshold,
        random_state=args.seed, dtype=dtype, callbacks=[AtPasses()],
    )
    assert not model.optimize_alpha and not model.optimize_eta
    if args.save_lambda:
        np.save(args.save_lambda, model.state.get_lambda())
    return rows


# ---------------------------------------------------------------- table


def cmd_table(args):
    """Markdown table from the JSON-lines output of fit runs. Files named
    LABEL-seedN.jsonl are repeats of one configuration: CPU and wall seconds
    are their medians, the held-out figure their mean with the range."""
    import statistics
    groups = {}
    for path in args.files:
        label = os.path.basename(path).rsplit(".", 1)[0].rsplit("-seed", 1)[0]
        with open(path) as fh:
            recs = [json.loads(l) for l in fh if l.strip()]
        if not recs:
            continue
        info = recs[0]
        for r in recs[1:]:
            g = groups.setdefault((label, r["passes"]), {"info": info, "rows": []})
            g["rows"].append(r)
    print("| run | corpus | K | batch | kappa | tau0 | threads | passes | seeds | CPU s | docs/CPU-s | wall s "
          "| held-out per word (mean; min..max) |")
    print("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for (label, p), g in groups.items():
        info, rows = g["info"], g["rows"]
        cpu = statistics.median(r["cpu_s"] for r in rows)
        wall = statistics.median(r["wall_s"] for r in rows)
        h = [r["heldout_per_word"] for r in rows]
        corpus = os.path.basename(info["train"]).replace("-train.dat", "")
        threads = info["OPENBLAS_NUM_THREADS"] or "default"
        print("| %s | %s | %d | %d | %g | %g | %s | %d | %d | %.2f | %s | %.2f | %.3f (%.3f..%.3f) |" % (
            label, corpus, info["K"], info["chunksize"], info["decay"], info["offset"], threads, p,
            len(rows), cpu, format(round(info["D_train"] * p / cpu), ","), wall,
            sum(h) / len(h), min(h), max(h)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("split", help="make the fixed train / test-obs / test-heldout split of one LDA-C corpus")
    s.add_argument("corpus", help="LDA-C file, e.g. ../shared/data/ap/ap.dat")
    s.add_argument("-out", "--out", required=True, help="directory to write the files to")
    s.add_argument("-prefix", "--prefix", required=True, help="file name prefix: PREFIX-train.dat, ...")
    s.add_argument("-write-test", "--write-test", action="store_true",
                   help="also write PREFIX-test.dat (the unhalved test documents)")

    f = sub.add_parser("fit", help="train gensim LdaModel and report held-out likelihood")
    f.add_argument("-train", "--train", required=True)
    f.add_argument("-obs", "--obs", required=True, help="observed halves of the test documents")
    f.add_argument("-heldout", "--heldout", required=True, help="held-out halves, line-aligned with -obs")
    f.add_argument("-k", "--k", type=int, default=10, help="number of topics")
    f.add_argument("-alpha", "--alpha", type=float, default=0.1, help="fixed symmetric Dirichlet on theta")
    f.add_argument("-eta", "--eta", type=float, default=0.01, help="fixed symmetric Dirichlet on beta")
    f.add_argument("-chunksize", "--chunksize", type=int, default=256, help="minibatch size")
    f.add_argument("-decay", "--decay", type=float, default=0.7, help="kappa of rho_t = (tau0 + t)^-kappa")
    f.add_argument("-offset", "--offset", type=float, default=1024.0, help="tau0")
    f.add_argument("-report", "--report", type=int, nargs="+", default=[1, 3, 10],
                   help="passes after which to evaluate; trains max(report) passes")
    f.add_argument("-iterations", "--iterations", type=int, default=100,
                   help="cap on local (per document) sweeps during training")
    f.add_argument("-gamma-threshold", "--gamma-threshold", type=float, default=1e-3,
                   help="local convergence: mean absolute change of gamma_d")
    f.add_argument("-eval-iterations", "--eval-iterations", type=int, default=1000,
                   help="cap on sweeps when inferring gamma for the observed halves")
    f.add_argument("-eval-gamma-threshold", "--eval-gamma-threshold", type=float, default=1e-6,
                   help="mean absolute change of gamma_d when inferring the observed halves")
    f.add_argument("-dtype", "--dtype", choices=["float32", "float64"], default="float32",
                   help="LdaModel dtype (gensim's default is float32)")
    f.add_argument("-seed", "--seed", type=int, default=1, help="random_state")
    f.add_argument("-save-lambda", "--save-lambda", help="write the final lambda (K x V) to this .npy file")

    t = sub.add_parser("table", help="markdown table from fit outputs (LABEL-seedN.jsonl files)")
    t.add_argument("files", nargs="+")

    args = ap.parse_args(argv)
    if args.cmd == "split":
        cmd_split(args)
    elif args.cmd == "table":
        cmd_table(args)
    else:
        for name in ("k", "chunksize", "iterations", "eval_iterations"):
            if getattr(args, name) < 1:
                ap.error("-%s must be >= 1" % name.replace("_", "-"))
        if min(args.report) < 1:
            ap.error("-report passes must be >= 1")
        cmd_fit(args)


if __name__ == "__main__":
    sys.exit(main())
