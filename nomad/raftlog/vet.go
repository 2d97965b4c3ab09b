package raftlog

import (
	"fmt"

	"github.com/hashicorp/raft"
)

// Vet returns why raft would panic on e, as it stores e or as it starts
// with e in its log, or nil. The server's transport calls it on every
// entry a would-be leader sends, and the server on every entry of its own
// log before raft starts (nomad/raft_vet.go says why).
//
// Only two kinds of entry are refused: a configuration entry whose data
// does not decode, and a peer change of raft's old protocol. Every other
// entry passes, command entries of any message type included (see the
// package doc): refusing a type this server does not know would stall it
// behind a newer leader.
func Vet(e *raft.Log) error {
	switch e.Type {
	case raft.LogConfiguration:
		if err := VetConfiguration(e.Data); err != nil {
			return fmt.Errorf("entry %d: %w", e.Index, err)
		}
	case raft.LogAddPeerDeprecated, raft.LogRemovePeerDeprecated:
		return fmt.Errorf("entry %d is a peer change of raft's old protocol (%s), which Drover's servers never write", e.Index, e.Type)
	}
	return nil
}

// VetConfiguration reports whether data is a raft configuration, as a
// configuration entry or an installed snapshot carries one:
// raft.DecodeConfiguration panics on anything else.
func VetConfiguration(data []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the configuration does not decode: %v", p)
		}
	}()
	raft.DecodeConfiguration(data)
	return nil
}
