package derive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// This file derives what online EM (Cappé & Moulines 2009), the params'
// side of stochastic variational inference, needs of an M-step: its
// expected sufficient statistics split into one unit's part, which SVI
// averages over minibatches, and the rest, which depends on no unit and is
// added when the M-step is taken. A gaussian M-step's statistics (n,
// Σ E[x], Σ E[x xᵀ]) split by themselves; a counts M-step's expected
// counts are split here; a numeric M-step's objective is not a function of
// summed statistics and has no online form.

// OnlineCounts splits the expected counts of a counts M-step (MStep.Counts)
// for online EM. Unit is one unit's part, from the statements inside the
// unit plate, with the unit index free in its expressions (its At are
// those of MStep.Counts, so it writes an array shaped as the param); Rest
// is the part of the other statements (the Dirichlet prior's α − 1, and
// statements outside the unit plate, which read no local latent). Either
// is nil if it has no statement. Counts = Unit summed over the units +
// Rest.
type OnlineCounts struct {
	Unit, Rest *Update
}

// onlineMSteps sets Online (or NoOnlineReason) of the counts M-steps of d, for
// a model with a unit plate.
func (b *Builder) onlineMSteps(d *Derivation, qs map[string]*QFactor) {
	unit, err := d.unit()
	if err != nil || unit == nil {
		return
	}
	local := d.localLatents()
	for _, s := range d.mSteps {
		if s.Kind == "counts" {
			s.Online, s.NoOnlineReason = b.onlineCounts(s, *unit, local, qs)
		}
	}
}

// onlineCounts splits the counts M-step s at the unit plate.
// It returns why not, positioned, if it cannot be.
func (b *Builder) onlineCounts(s *MStep, unit Index, local map[string]bool, qs map[string]*QFactor) (*OnlineCounts, string) {
	v, full := s.Params[0], s.Counts
	if slices.Contains(v.Type.Dims, unit.Size) {
		return nil, fmt.Sprintf("%s: param %s has one row per unit of `for %s in 1:%s`, and online EM estimates params shared by all units; fit it by coordinate ascent, or make it a latent",
			v.Pos, v.Name, unit.Name, unit.Size)
	}
	var in, rest []*ir.Factor
	for _, f := range full.Factors {
		if InPlate(f, unit) {
			in = append(in, f)
		} else {
			rest = append(rest, f)
		}
	}
	for _, f := range rest {
		for _, l := range b.Model.VarsWithRole(ir.RoleLatent) {
			if name := l.Name; local[name] && mentionsVar(f, name) {
				return nil, fmt.Sprintf("%s: param %s is read here, outside the unit plate `for %s in 1:%s`, with the local latent %s, so its expected counts are not a sum over units; draw the statement inside the loop over %s, or fit by coordinate ascent",
					f.Pos, v.Name, unit.Name, unit.Size, name, unit.Name)
			}
		}
	}
	part := func(factors []*ir.Factor, u *Index) (*Update, error) {
		if len(factors) == 0 {
			return nil, nil
		}
		up := &Update{Latent: v, Q: full.Q, Unit: u, At: full.At, Factors: factors}
		ex, err := b.expectedNatural(up, qs, factors[0])
		if err != nil {
			return nil, err
		}
		up.Params = ex
		return up, nil
	}
	o := &OnlineCounts{}
	var err error
	if o.Unit, err = part(in, &unit); err == nil {
		o.Rest, err = part(rest, nil)
	}
	if err != nil {
		// the parts of a derivation that succeeded as a whole
		why, _, _ := strings.Cut(err.Error(), "\n")
		return nil, why
	}
	return o, ""
}
