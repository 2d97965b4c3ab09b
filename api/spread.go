package api

// Spread asks the scheduler to spread allocations over the values of a node
// attribute (e.g. ${node.datacenter}), optionally in given proportions.
type Spread struct {
	Attribute string

	// Weight is from 0 to 100 and ranks this spread against others and
	// against affinities.
	Weight *int8

	// SpreadTarget gives the wanted percentage per attribute value; without
	// targets allocations are spread evenly.
	SpreadTarget []*SpreadTarget
}

// SpreadTarget is the share of allocations wanted on nodes whose attribute
// equals Value.
type SpreadTarget struct {
	Value   string
	Percent uint8
}

// NewSpread returns a spread over attribute with the given weight and targets.
func NewSpread(attribute string, weight int8, targets []*SpreadTarget) *Spread {
	return &Spread{Attribute: attribute, Weight: new(weight), SpreadTarget: targets}
}

// NewSpreadTarget returns a target of percent for value.
func NewSpreadTarget(value string, percent uint8) *SpreadTarget {
	return &SpreadTarget{Value: value, Percent: percent}
}

// Canonicalize gives a spread without a weight the weight 50.
func (s *Spread) Canonicalize() {
	if s.Weight == nil {
		s.Weight = new(int8(50))
	}
}
