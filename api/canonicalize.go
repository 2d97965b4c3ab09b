package api

// canonicalizeEach fills the defaults of each block of a list.
func canonicalizeEach[V interface{ Canonicalize() }](vs []V) {
	for _, v := range vs {
		v.Canonicalize()
	}
}
