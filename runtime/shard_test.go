package runtime

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestInitInShards: a shard's starting values, drawn with the other
// units' draws skipped, are the whole fit's for its units, and a latent
// drawn after it continues the same stream.
func TestInitInShards(t *testing.T) {
	const total, unitLen = 11, 3
	for _, init := range []struct {
		name  string
		whole func(r []float64, seed uint64)
		in    func(x []float64, seed uint64, s ShardRange, after []float64)
	}{
		{"positive", func(x []float64, seed uint64) { InitPositive(NewRand(seed), x) },
			func(x []float64, seed uint64, s ShardRange, after []float64) {
				r := NewRand(seed)
				InitPositiveIn(r, x, s, unitLen)
				InitPositive(r, after)
			}},
		{"normal", func(x []float64, seed uint64) { InitNormal(NewRand(seed), x) },
			func(x []float64, seed uint64, s ShardRange, after []float64) {
				r := NewRand(seed)
				InitNormalIn(r, x, s, unitLen)
				InitNormal(r, after)
			}},
	} {
		whole := make([]float64, total*unitLen+2)
		init.whole(whole, 5)
		for _, cut := range [][2]int{{0, 11}, {0, 4}, {4, 9}, {9, 11}, {5, 5}} {
			s, err := NewShardRange(cut[0], cut[1]-cut[0], total)
			if err != nil {
				t.Fatal(err)
			}
			x, after := make([]float64, (cut[1]-cut[0])*unitLen), make([]float64, 2)
			init.in(x, 5, s, after)
			for i, v := range x {
				if w := whole[cut[0]*unitLen+i]; v != w {
					t.Fatalf("%s, units %d..%d: value %d is %v, the whole fit's %v", init.name, cut[0]+1, cut[1], i, v, w)
				}
			}
			for i, v := range after {
				if w := whole[total*unitLen+i]; v != w {
					t.Fatalf("%s, units %d..%d: the next latent's value %d is %v, the whole fit's %v", init.name, cut[0]+1, cut[1], i, v, w)
				}
			}
		}
	}
	if _, err := NewShardRange(8, 4, 11); err == nil {
		t.Error("a shard past the last unit was accepted")
	}
}

// TestShardStatsRoundTrip: statistics encode and decode to the same
// bytes and merge exactly whatever the order.
func TestShardStatsRoundTrip(t *testing.T) {
	mk := func(units, settled int, tr Trouble, xs ...float64) *ShardStats {
		s := &ShardStats{Units: units, Settled: settled, Trouble: tr, HasELBO: true, ELBO: NewExactVec(1), Sums: NewExactVec(len(xs))}
		s.ELBO.AddAt(0, float64(units)*0.1)
		s.Sums.Add(xs)
		return s
	}
	a := mk(3, 2, Trouble{"theta: indefinite": 2}, 1e16, 1, -3)
	b := mk(4, 4, nil, 1, 1e-300, 7)
	c := mk(2, 1, Trouble{"theta: indefinite": 1, "z: nan": 1}, -1e16, 1, math.Pi)
	enc := func(s *ShardStats) []byte {
		bs, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back ShardStats
		if err := back.UnmarshalBinary(bs); err != nil {
			t.Fatal(err)
		}
		bs2, _ := back.MarshalBinary()
		if !bytes.Equal(bs, bs2) {
			t.Fatal("statistics encode differently after a round trip")
		}
		return bs
	}
	dec := func(bs []byte) *ShardStats {
		var s ShardStats
		if err := s.UnmarshalBinary(bs); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	ea, eb, ec := enc(a), enc(b), enc(c)
	x := dec(ea)
	for _, o := range [][]byte{eb, ec} {
		if err := x.Merge(dec(o)); err != nil {
			t.Fatal(err)
		}
	}
	y := dec(ec)
	yb := dec(eb)
	if err := yb.Merge(dec(ea)); err != nil {
		t.Fatal(err)
	}
	if err := y.Merge(yb); err != nil {
		t.Fatal(err)
	}
	ex, ey := enc(x), enc(y)
	if !bytes.Equal(ex, ey) {
		t.Error("merging in two orders gave different statistics")
	}
	if x.Units != 9 || x.Settled != 7 || x.Trouble["theta: indefinite"] != 3 || x.Trouble["z: nan"] != 1 {
		t.Errorf("bookkeeping: %+v", x)
	}
	// 1e16 + 1 − 1e16 is 1; float64 sums in this order give 0
	if got := x.Sums.Value(0); got != 1 {
		t.Errorf("first sum %v, want 1", got)
	}
	var cut ShardStats
	if err := cut.UnmarshalBinary(ex[:len(ex)-3]); err == nil {
		t.Error("cut-short statistics decoded")
	}
	noELBO := mk(1, 1, nil, 0, 0, 0)
	noELBO.HasELBO = false
	if err := x.Merge(noELBO); err == nil {
		t.Error("statistics with and without the ELBO merged")
	}
}

// TestShardStatsEmpty: the zero ShardStats is a combiner's empty
// accumulator: merging into it, even after an encoding, gives the other.
func TestShardStatsEmpty(t *testing.T) {
	var empty ShardStats
	b, err := empty.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var acc ShardStats
	if err := acc.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	o := &ShardStats{Units: 2, Settled: 2, HasELBO: true, ELBO: NewExactVec(1), Sums: NewExactVec(2)}
	o.Sums.Add([]float64{1.5, -2})
	o.ELBO.AddAt(0, -7)
	for _, a := range []*ShardStats{&empty, &acc} {
		if err := a.Merge(o); err != nil {
			t.Fatal(err)
		}
		if a.Units != 2 || !a.HasELBO || a.Sums.Value(0) != 1.5 || a.Sums.Value(1) != -2 || a.ELBO.Value(0) != -7 {
			t.Errorf("empty merged with o: %+v", a)
		}
	}
}

// TestCheckShard: the options a sharded fit does not carry out are
// refused, each named; the ones it does pass.
func TestCheckShard(t *testing.T) {
	type S = Settings[struct{}, struct{}]
	ok := []S{{}, {Algorithm: "svi"}, {Seed: 3, Workers: 2}}
	for _, s := range ok {
		if err := s.CheckShard(); err != nil {
			t.Errorf("%+v refused: %v", s, err)
		}
	}
	bad := map[string]S{
		"tempering":   {Temper: TemperSettings{Mode: "vt"}},
		"restarts":    {Restarts: 3},
		"checkpoints": {Checkpoint: Checkpoint{Path: "x", Every: 2}},
		"a start":     {Start: &Result[struct{}, struct{}]{}},
		"SSMF":        {Algorithm: "svi", SVI: SVISettings{Global: GlobalSSMF}},
	}
	for want, s := range bad {
		err := s.CheckShard()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
}
