package api

// valueOf is *p, or the zero options for a nil p: how each "copy of the
// options with one change" begins, so that the caller's options stay as
// they were.
func valueOf[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// withParams returns a copy of q with more query parameters, given as
// key, value pairs.
func withParams(q *QueryOptions, kv ...string) *QueryOptions {
	c := valueOf(q)
	c.Params = addParams(c.Params, kv)
	return &c
}

// withParam returns a copy of w with one more query parameter.
func withParam(w *WriteOptions, k, v string) *WriteOptions {
	c := valueOf(w)
	c.Params = addParams(c.Params, []string{k, v})
	return &c
}

// addParams returns a new map of params and the key, value pairs kv.
func addParams(params map[string]string, kv []string) map[string]string {
	out := make(map[string]string, len(params)+len(kv)/2)
	for k, v := range params {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
