package api

// System is the /v1/system family.
type System struct{ c *Client }

// System returns the system endpoints.
func (c *Client) System() *System { return &System{c: c} }

// GarbageCollect runs garbage collection now instead of waiting for the
// thresholds (PUT /v1/system/gc). Only terminal objects are collected.
func (s *System) GarbageCollect(w *WriteOptions) error {
	_, err := s.c.put("/v1/system/gc", nil, nil, w)
	return err
}
