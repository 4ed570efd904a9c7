#!/usr/bin/env python3
"""The Laplace fit of Bayesian logistic regression in numpy, the baseline of
vs_numpy.sh: the mode of the log posterior under a N(0, I) prior by Newton's
method with backtracking (stopping, as vigen's does, once the Newton
decrement g'(-H)^-1 g / 2 is below 1e-12 (1 + |f|)), then the covariance
(-H)^-1. Every product is a numpy (BLAS) call.

    python3 newton.py train.csv Class1 [repeats]

prints the mean CPU milliseconds of one fit over the repeats (the CSV is
read once, before), and the first coefficients."""
import sys
import time

import numpy as np


def load(path, label):
    with open(path) as f:
        header = f.readline().strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    feats = [j for j, h in enumerate(header) if h.startswith("f") and h[1:].isdigit()]
    x = np.hstack([np.ones((data.shape[0], 1)), data[:, feats]])
    return np.ascontiguousarray(x), data[:, header.index(label)]


def fit(x, y):
    p = x.shape[1]
    theta = np.zeros(p)

    def evaluate(th):
        eta = x @ th
        # log p(y | eta) = y eta - log(1 + e^eta), stably
        f = y @ eta - np.logaddexp(0, eta).sum() - 0.5 * th @ th
        s = 0.5 * (1 + np.tanh(0.5 * eta))  # logistic
        g = x.T @ (y - s) - th
        h = -(x.T * (s * (1 - s))) @ x - np.eye(p)
        return f, g, h

    f, g, h = evaluate(theta)
    for _ in range(200):
        c = np.linalg.cholesky(-h)
        d = np.linalg.solve(c.T, np.linalg.solve(c, g))
        dec = g @ d / 2
        t = 1.0
        while True:
            ft, gt, ht = evaluate(theta + t * d)
            if ft >= f + 1e-4 * t * (g @ d) or dec <= 1e-12 * (1 + abs(f)) or t < 1e-12:
                break
            t /= 2
        theta, f, g, h = theta + t * d, ft, gt, ht
        if dec <= 1e-12 * (1 + abs(f)):
            break
    return theta, np.linalg.inv(-h)


def main():
    path, label = sys.argv[1], sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    x, y = load(path, label)
    fit(x, y)  # warm up
    t0 = time.process_time()
    for _ in range(repeats):
        theta, cov = fit(x, y)
    ms = (time.process_time() - t0) / repeats * 1e3
    print(f"numpy {ms:.2f} ms CPU per fit ({x.shape[0]} × {x.shape[1]}); theta[:3] = {theta[:3]}")


if __name__ == "__main__":
    main()
