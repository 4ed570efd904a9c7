// gp_kernel_checks runs every F and Delta kernel of the generated GP (the
// test writes their calls in place of the comment in kernels) at a random
// point and prints the largest relative error of each check.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strings"

	model "tmpe2e/PKG"
)

type kernel struct {
	latent, kind, params string
	call                 func([][]float64) float64
}

func main() {
	d, err := model.LoadData(os.Stdin)
	if err != nil {
		panic(err)
	}
	m, err := model.NewModel(d)
	if err != nil {
		panic(err)
	}
	dims := map[string]int{"z1": d.K1, "z2": d.K2}
	dim := func(v string) int {
		if k, ok := dims[v]; ok {
			return k
		}
		return 1
	}
	rng := rand.New(rand.NewSource(1))
	// every latent's mean and a covariance, shared by all kernels
	vals := map[string][]float64{}
	for _, v := range []string{"a", "as", "lsd1", "lls1", "z1", "lsd2", "lls2", "z2"} {
		k := dim(v)
		mean := make([]float64, k)
		for i := range mean {
			mean[i] = 0.3 * rng.NormFloat64()
		}
		cov := make([]float64, k*k)
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				c := 0.01 * rng.NormFloat64()
				cov[i*k+j] += c
				cov[j*k+i] += c
			}
			cov[i*k+i] += 0.05
		}
		vals[v+"Mean"], vals[v+"Cov"] = mean, cov
	}
	kernels := []kernel{
		/* CALLS */
	}
	rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Max(1, math.Abs(b)) }
	res := map[string]float64{}
	eval := func(k kernel, x []float64, g, h []float64) float64 {
		var args [][]float64
		for _, p := range strings.Split(k.params, ",") {
			switch {
			case p == k.latent:
				args = append(args, x)
			case p == "cov":
				args = append(args, vals[k.latent+"Cov"])
			case p == "grad":
				args = append(args, g)
			case p == "hess":
				args = append(args, h)
			default:
				v, ok := vals[p]
				if !ok {
					panic("unknown parameter " + p)
				}
				args = append(args, v)
			}
		}
		return k.call(args)
	}
	fOf := map[string]kernel{}
	for _, k := range kernels {
		if k.kind == "F" {
			fOf[k.latent] = k
		}
	}
	for _, k := range kernels {
		p := dim(k.latent)
		x := vals[k.latent+"Mean"]
		g, h := make([]float64, p), make([]float64, p*p)
		eval(k, x, g, h)
		const step = 1e-5
		eg, eh := 0.0, 0.0
		for i := 0; i < p; i++ {
			xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
			xp[i] += step
			xm[i] -= step
			gp, gm := make([]float64, p), make([]float64, p)
			fp := eval(k, xp, gp, make([]float64, p*p))
			fm := eval(k, xm, gm, make([]float64, p*p))
			eg = math.Max(eg, rel(g[i], (fp-fm)/(2*step)))
			for j := 0; j < p; j++ {
				eh = math.Max(eh, rel(h[j*p+i], (gp[j]-gm[j])/(2*step)))
			}
		}
		res[k.latent+k.kind+".grad"] = eg
		res[k.latent+k.kind+".hess"] = eh
		if k.kind == "Delta" {
			// Eq. 17: f(μ) + ½Tr{∇²f(μ)Σ}
			fg, fh := make([]float64, p), make([]float64, p*p)
			f := eval(fOf[k.latent], x, fg, fh)
			cov := vals[k.latent+"Cov"]
			for i := range fh {
				f += 0.5 * fh[i] * cov[i]
			}
			res[k.latent+"Delta.value"] = rel(eval(k, x, g, h), f)
		}
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
}
