package derive

import (
	"slices"
	"testing"
)

// A family that is a special case of a conjugate family (Conjugacy.Family)
// names an entry of the table that is conjugate in its own right, and its
// Conjugacy is that entry's (q is in that family): TableQ builds q in
// it, NaturalMaps steps it, and the latent's prior is listed among the
// conjugate families.
func TestSpecialCaseFamilies(t *testing.T) {
	n := 0
	for _, d := range table {
		c := d.Conj
		if c == nil || c.Family == "" {
			continue
		}
		n++
		of := Dists[c.Family]
		if of == nil || of.Conj == nil || of.Conj.Family != "" || of.ExpFam == nil {
			t.Errorf("%s is a special case of %q, which is not a conjugate family of its own", d.Name, c.Family)
			continue
		}
		// a Joint family's update is read off its objective, not FromNatural
		if !slices.Equal(c.Params, of.Conj.Params) || c.FromNatural == nil && !c.Joint {
			t.Errorf("%s: Conjugacy %+v, want that of %s", d.Name, c, c.Family)
		}
		if q := TableQ("z", d.Name); q.Family != c.Family || len(q.Params) != len(of.Conj.Params) {
			t.Errorf("TableQ(z, %s) = %s with %d parameters, want %s", d.Name, q.Family, len(q.Params), c.Family)
		}
		if QFamily(d.Name) != c.Family || QFamily(c.Family) != c.Family {
			t.Errorf("QFamily(%s) = %s, QFamily(%s) = %s", d.Name, QFamily(d.Name), c.Family, QFamily(c.Family))
		}
		if !slices.Contains(ConjugateFamilies(), d.Name) {
			t.Errorf("ConjugateFamilies() lacks %s", d.Name)
		}
	}
	if Dists["Exponential"].Conj == nil || Dists["Exponential"].Conj.Family != "Gamma" || n == 0 {
		t.Error("Exponential is not a special case of Gamma")
	}
}
