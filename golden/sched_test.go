package golden

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/codegen"
	"github.com/vigen-go/vigen/derive"
)

// schedKernels are the kernels whose statement trees are golden files in
// testdata/sched/MODEL.KERNEL.txt: together they show loop order, fusion
// of terms into one loop nest, hoisting of loop invariants, vector
// temporaries, reductions, common subexpressions and mirrored Hessians.
// A change to the scheduler shows here as a diff of a few short trees
// rather than of the printed Go.
var schedKernels = []struct{ model, kernel string }{
	{"logreg", "ThetaF"},       // f, ∇f, ∇²f over data points: one fused pass, a rank-1 Hessian update per row read in place
	{"logreg", "ThetaDelta"},   // the delta-method objective and its gradient
	{"hierlogreg", "ThetaF"},   // a per-unit latent: the unit's rows only
	{"ctm", "ThetaF"},          // CTM's θ: log-sum-exp over topics, a dense Hessian
	{"ctm", "ThetaDelta"},      // CTM's delta kernel: third-derivative terms
	{"ctm", "ThetaCollapsed"},  // the collapsed objective: a rank-1 Hessian update per word, its vector shared
	{"ctm", "ZNaturalExp"},     // exponentiated natural parameters, normalized per word
	{"lda", "ZNaturalExp"},     // the same in LDA: digamma terms hoisted out of the word loop
	{"lda", "BetaMoments"},     // Dirichlet moments: a reduction per topic
	{"lda", "elboUnit"},        // one document's ELBO terms
	{"hlm", "ZMoments"},        // a conjugate latent's moments
	{"hierlogreg", "elboUnit"}, // a nonconjugate unit's ELBO
}

// TestSchedules compares the statement trees of schedKernels with
// testdata/sched; go test ./golden -update rewrites them.
func TestSchedules(t *testing.T) {
	trees := map[string]map[string][]codegen.Stmt{}
	for _, vi := range examples(t) {
		name := strings.TrimSuffix(filepath.Base(vi), ".vi")
		d, opts := load(t, vi)
		ks, err := codegen.Schedules(d, opts)
		if err != nil {
			t.Fatal(err)
		}
		trees[name] = map[string][]codegen.Stmt{}
		for _, k := range ks {
			if _, dup := trees[name][k.Name]; dup {
				t.Errorf("%s: two kernels named %s", vi, k.Name)
			}
			trees[name][k.Name] = k.Stmts
		}
	}
	want := map[string]bool{}
	for _, sk := range schedKernels {
		file := sk.model + "." + sk.kernel + ".txt"
		want[file] = true
		path := filepath.Join("testdata", "sched", file)
		stmts, ok := trees[sk.model][sk.kernel]
		if !ok {
			t.Errorf("example %s has no kernel %s any more; choose another for schedKernels", sk.model, sk.kernel)
			continue
		}
		got := []byte(formatStmts(stmts))
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%v (run go test ./golden -update)", err)
			continue
		}
		if !bytes.Equal(old, got) {
			t.Errorf("the schedule of %s's %s differs from %s; if the change is intended, run go test ./golden -update\n%s", sk.model, sk.kernel, path, firstDiff(old, got))
		}
	}
	// No golden file for a kernel no longer listed.
	files, _ := filepath.Glob(filepath.Join("testdata", "sched", "*.txt"))
	for _, f := range files {
		if !want[filepath.Base(f)] {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("%s is not in schedKernels; remove it or run go test ./golden -update", f)
		}
	}
}

// formatStmts prints a statement tree one statement a line, nested
// statements indented by two spaces, expressions as derive.String prints
// them; the form is meant for review, not for parsing.
func formatStmts(stmts []codegen.Stmt) string {
	var sb strings.Builder
	writeStmts(&sb, stmts, 0)
	return sb.String()
}

func writeStmts(sb *strings.Builder, stmts []codegen.Stmt, depth int) {
	for _, s := range stmts {
		writeStmt(sb, s, depth)
	}
}

func writeStmt(sb *strings.Builder, s codegen.Stmt, depth int) {
	ind := strings.Repeat("  ", depth)
	switch s := s.(type) {
	case *codegen.Let:
		fmt.Fprintf(sb, "%slet %s = %s\n", ind, s.Name, derive.String(s.Expr))
	case *codegen.Reduce:
		op := "sum"
		if s.Max {
			op = "max"
		}
		fmt.Fprintf(sb, "%s%s %s = %s %s\n", ind, op, s.Name, loopHead(s.Loop), derive.String(s.Body))
		writeStmts(sb, s.Loop.Body, depth+1)
	case *codegen.VecLet:
		if s.Stmts != nil {
			fmt.Fprintf(sb, "%svec %s[%s]\n", ind, s.Name, s.Size)
			writeStmts(sb, s.Stmts, depth+1)
			return
		}
		fmt.Fprintf(sb, "%svec %s[%s] = %s %s\n", ind, s.Name, s.Size, loopHead(s.Loop), derive.String(s.Body))
		writeStmts(sb, s.Loop.Body, depth+1)
	case *codegen.Loop:
		fmt.Fprintf(sb, "%s%s\n", ind, loopHead(s))
		writeStmts(sb, s.Body, depth+1)
	case *codegen.Accum:
		var at []string
		for _, x := range s.At {
			at = append(at, derive.String(x))
		}
		target := s.Target
		if len(at) > 0 {
			target += "[" + strings.Join(at, ", ") + "]"
		}
		upper := ""
		if s.Upper {
			upper = " (upper)"
		}
		fmt.Fprintf(sb, "%s%s += %s%s\n", ind, target, derive.String(s.Expr), upper)
	case *codegen.Syr:
		fmt.Fprintf(sb, "%s%s[%s, %s] += %s · %s ⊗ itself (upper)\n", ind, s.Target, s.Size, s.Size, derive.String(s.Alpha), derive.String(s.X))
	case *codegen.Mirror:
		fmt.Fprintf(sb, "%smirror %s[%s, %s]\n", ind, s.Target, s.Size, s.Size)
	default:
		fmt.Fprintf(sb, "%s%T %+v\n", ind, s, s)
	}
}

// loopHead prints a loop's header: "for i < N:" or "for i in j..N:".
func loopHead(l *codegen.Loop) string {
	if l == nil {
		return "(no loop)"
	}
	if l.From != "" {
		return fmt.Sprintf("for %s in %s..%s:", l.Idx.Name, l.From, l.Idx.Size)
	}
	return fmt.Sprintf("for %s < %s:", l.Idx.Name, l.Idx.Size)
}
