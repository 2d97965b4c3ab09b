package api

// AllocCheckStatus is one service check's latest result on the client
// that runs the allocation. Status is success, failure or pending (or
// warning, for a script that exited 1); Timestamp is in Unix seconds.
type AllocCheckStatus struct {
	ID         string
	Check      string
	Group      string
	Mode       string
	Output     string
	Service    string
	Task       string
	Status     string
	StatusCode int
	Timestamp  int64
}

// AllocCheckStatuses are an allocation's check results by check ID.
type AllocCheckStatuses map[string]AllocCheckStatus

// Checks reads an allocation's service check results from its client.
func (a *Allocations) Checks(allocID string, q *QueryOptions) (AllocCheckStatuses, error) {
	var out AllocCheckStatuses
	if _, err := a.c.query("/v1/client/allocation/"+escape(allocID)+"/checks", &out, q); err != nil {
		return nil, err
	}
	return out, nil
}
