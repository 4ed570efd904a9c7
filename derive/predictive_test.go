package derive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

func derivePredictive(t *testing.T, name, src string) *Derivation {
	t.Helper()
	m, err := spec.Load(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Derive(m)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", name, name+".vi"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPredictiveDebug(t *testing.T) {
	for _, n := range []string{"lda", "ctm", "logreg"} {
		d := derivePredictive(t, n+".vi", readExample(t, n))
		if d.Predictive == nil {
			t.Logf("%s: %v", n, d.NoPredictive)
			continue
		}
		p := d.Predictive
		t.Logf("%s: mix %s\n topic %s\n %v\n %v", n, String(p.Mix), String(p.Topic), p.MixRules, p.TopicRules)
		_ = strings.Join
	}
}
