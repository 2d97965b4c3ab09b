package structs

// PeriodicForceRequest launches a periodic job's child now
// (`job periodic force`), whatever its schedule.
type PeriodicForceRequest struct {
	JobID string
	WriteRequest
}

// PeriodicForceResponse names the evaluation of the launched child and
// the raft index that created it.
type PeriodicForceResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	WriteMeta
}
