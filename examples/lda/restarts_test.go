package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/lda/lda"
)

// Restarts runs the fit from successive seeds and keeps the largest final
// ELBO among the runs that ended normally: the result is the single fit
// from that seed (bar the record and the time), every seed's final ELBO is
// recorded, and neither depends on the number of workers.
func TestRestartsKeepTheBestSeed(t *testing.T) {
	data := &lda.Data{K: 3, V: 20, W: small(11, 40, 20)}
	single := make([]*lda.Result, 4)
	for i := range single {
		r, err := lda.Fit(context.Background(), data, lda.Options{MaxIter: 60, Seed: 7 + uint64(i), Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		single[i] = r
	}
	best := 0
	for i, r := range single {
		if r.ELBO[len(r.ELBO)-1] > single[best].ELBO[len(single[best].ELBO)-1] {
			best = i
		}
	}
	var prev []byte
	for _, workers := range []int{1, 3} {
		res, err := lda.Fit(context.Background(), data, lda.Options{MaxIter: 60, Seed: 7, Restarts: 4, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		rec := res.Restarts
		if rec == nil || len(rec.Seeds) != 4 || rec.Seeds[0] != 7 || rec.Best != best {
			t.Fatalf("workers %d: restarts %+v, want seeds 7… and best %d", workers, rec, best)
		}
		lo, hi := 0.0, 0.0
		for i, r := range single {
			e := r.ELBO[len(r.ELBO)-1]
			if rec.ELBO[i] == nil || *rec.ELBO[i] != e || rec.Status[i] != r.Status {
				t.Errorf("seed %d: recorded %v %q, the fit's %v %q", 7+i, rec.ELBO[i], rec.Status[i], e, r.Status)
			}
			if i == 0 || e < lo {
				lo = e
			}
			if i == 0 || e > hi {
				hi = e
			}
		}
		if rec.Spread != hi-lo || rec.Spread == 0 {
			t.Errorf("spread %v, want %v (and the seeds to differ)", rec.Spread, hi-lo)
		}
		res.Restarts, res.Seconds = nil, 0
		want := *single[best]
		want.Seconds = 0
		a, _ := json.Marshal(res)
		b, _ := json.Marshal(&want)
		if !bytes.Equal(a, b) {
			t.Errorf("workers %d: the kept result differs from the single fit with seed %d", workers, 7+best)
		}
		if prev != nil && !bytes.Equal(a, prev) {
			t.Errorf("the result depends on the number of workers")
		}
		prev = a
	}
	_, err := lda.Fit(context.Background(), data, lda.Options{Restarts: 2, Start: single[0]})
	if err == nil || !strings.Contains(err.Error(), "restarts: Start, Resume and Checkpoint apply to one run") {
		t.Errorf("Restarts with Start: error %v", err)
	}
}
