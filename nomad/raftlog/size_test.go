package raftlog

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

func TestCheckSize(t *testing.T) {
	if MaxEntrySize != rpcx.DefaultMaxMessageSize {
		t.Fatalf("an entry may be %d bytes, an RPC message %d: a follower could not be sent every entry", MaxEntrySize, rpcx.DefaultMaxMessageSize)
	}
	if err := CheckSize(structs.JobRegisterRequestType, MaxEntrySize); err != nil {
		t.Fatalf("an entry of exactly the limit was refused: %v", err)
	}
	err := CheckSize(structs.JobRegisterRequestType, MaxEntrySize+1)
	if err == nil {
		t.Fatal("an entry over the limit was let through")
	}
	for _, want := range []string{"JobRegister", "16777217 bytes", "16777216 bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
}
