package api

// Affinity is a soft constraint: nodes where "LTarget Operand RTarget" holds
// score higher (or lower, for a negative weight), but none are filtered out.
type Affinity struct {
	LTarget string
	RTarget string
	Operand string

	// Weight is from -100 to 100.
	Weight *int8
}

// NewAffinity returns an affinity with the given weight.
func NewAffinity(lTarget, operand, rTarget string, weight int8) *Affinity {
	return &Affinity{LTarget: lTarget, RTarget: rTarget, Operand: operand, Weight: new(weight)}
}

// Canonicalize gives an affinity without a weight the middle weight, 50.
func (a *Affinity) Canonicalize() {
	if a.Weight == nil {
		a.Weight = new(int8(50))
	}
}
