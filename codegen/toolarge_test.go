package codegen

import (
	"os"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// TestKernelTooLargeIsPositioned: a kernel longer than maxKernelLines is
// refused at its latent, naming the kernel, its length and the statements
// it comes from, instead of being left to a build that takes minutes and
// gigabytes (mixlit of issue 39: a 13,573-line delta kernel). The limit is
// lowered here so that linear regression's kernels exceed it.
func TestKernelTooLargeIsPositioned(t *testing.T) {
	m, err := spec.Load("linreg.vi", []byte(linregVI))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generateModel(m, Options{}); err != nil {
		t.Fatalf("at the default limit: %v", err)
	}
	defer func(v int) { maxKernelLines = v }(maxKernelLines)
	maxKernelLines = 20
	_, err = generateModel(m, Options{})
	if err == nil {
		t.Fatal("a kernel over the limit was generated")
	}
	msg := err.Error()
	for _, want := range []string{"linreg.vi:8:8: the model is too large", "the kernel BetaF of latent beta would be", "(at most 20)", "linreg.vi:9:1", "linreg.vi:11:3", "hint:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q:\n%s", want, msg)
		}
	}
}

// TestMixtureTooLargeForDeltaIsRefused: issue 39's two-component mixture,
// whose package with the delta method's kernels took over 25 minutes to
// build, is generated within the default limit now that its statements
// are point terms (derive/point.go); an ordered logistic regression, whose
// cutpoints c : ordered[C] are read at data indices (a tree, not a point
// term), still has a delta kernel over it and is refused by c when asked
// for it.
func TestMixtureTooLargeForDeltaIsRefused(t *testing.T) {
	m, err := spec.Load("mixlit.vi", []byte(mixLiteralVI))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generateModel(m, Options{Methods: []string{"delta"}}); err != nil {
		t.Fatalf("mixlit with the delta kernels: %v", err)
	}
	src, err := os.ReadFile("testdata/gencost/ordered_logistic.vi")
	if err != nil {
		t.Fatal(err)
	}
	if m, err = spec.Load("ordered_logistic.vi", src); err != nil {
		t.Fatal(err)
	}
	if _, err := generateModel(m, Options{}); err != nil {
		t.Fatalf("ordered_logistic with its declared method's kernels: %v", err)
	}
	_, err = generateModel(m, Options{Methods: []string{"delta"}})
	if err == nil || !strings.Contains(err.Error(), "ordered_logistic.vi:9:8: the model is too large for vigen's derivative code: the kernel C_Delta of latent c") {
		t.Fatalf("ordered_logistic: %v, want the too-large error at c", err)
	}
}
