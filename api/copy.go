package api

// copyPtr returns a pointer to a copy of *p, or nil for a nil p: the
// shallow Copy of the policy blocks, whose fields are pointers to values
// that are replaced, never changed in place.
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
