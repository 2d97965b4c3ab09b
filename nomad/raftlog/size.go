package raftlog

import (
	"fmt"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// MaxEntrySize bounds one raft entry: no larger than an RPC message, so
// that every committed entry can be sent to a follower, forwarded and
// answered. Nothing a request makes should come near it (jobs are bounded
// by job_max_source_size, plans are cut into parts); CheckSize is the last
// check, before the entry is applied, so an oversized one changes nothing.
const MaxEntrySize = rpcx.DefaultMaxMessageSize

// CheckSize returns why an entry of type t and n bytes may not be written,
// or nil. The server marks the error as its request-too-large refusal.
func CheckSize(t structs.MessageType, n int) error {
	if n > MaxEntrySize {
		return fmt.Errorf("the %s raft entry this request makes is %d bytes, over the %d bytes an entry may have (the RPC message limit); nothing was written", t, n, MaxEntrySize)
	}
	return nil
}
