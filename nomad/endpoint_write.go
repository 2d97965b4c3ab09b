package nomad

import "github.com/drover-sched/drover/structs"

// applyIndexed commits one raft entry and sets *index, the answer's
// index, to the entry's: the last step of the endpoints whose answer
// carries nothing else about the write. It needs only raftApplier, so
// an endpoint passes its own narrow server.
func applyIndexed(r raftApplier, t structs.MessageType, msg any, index *uint64) error {
	idx, _, err := r.raftApply(t, msg)
	if err != nil {
		return err
	}
	*index = idx
	return nil
}
