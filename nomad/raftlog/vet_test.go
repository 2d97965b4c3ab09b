package raftlog

import (
	"strings"
	"testing"

	"github.com/hashicorp/raft"
)

// Vet refuses exactly the entries raft panics on, and lets through every
// other entry: a command entry of any type byte, known or not, and any
// data, must pass, or a follower behind a newer leader would stall.
func TestVetAcceptsEveryCommandEntry(t *testing.T) {
	for b := 0; b < 256; b++ {
		for _, data := range [][]byte{{byte(b)}, {byte(b), 0xc1, 0xff}} {
			if err := Vet(&raft.Log{Index: 3, Type: raft.LogCommand, Data: data}); err != nil {
				t.Fatalf("a command entry of type byte %d was refused: %v", b, err)
			}
		}
	}
	for _, typ := range []raft.LogType{raft.LogCommand, raft.LogNoop, raft.LogBarrier} {
		if err := Vet(&raft.Log{Index: 3, Type: typ}); err != nil {
			t.Fatalf("an empty %s entry was refused: %v", typ, err)
		}
	}
	cfg := raft.EncodeConfiguration(raft.Configuration{Servers: []raft.Server{{ID: "a", Address: "127.0.0.1:1"}}})
	if err := Vet(&raft.Log{Index: 3, Type: raft.LogConfiguration, Data: cfg}); err != nil {
		t.Fatalf("a configuration entry was refused: %v", err)
	}
}

func TestVetRefusesWhatRaftPanicsOn(t *testing.T) {
	cases := []struct {
		name string
		e    *raft.Log
		want string
	}{
		{"a configuration that does not decode", &raft.Log{Index: 7, Type: raft.LogConfiguration, Data: []byte{0xc1}}, "entry 7: the configuration does not decode"},
		{"an old-protocol peer addition", &raft.Log{Index: 8, Type: raft.LogAddPeerDeprecated}, "entry 8 is a peer change of raft's old protocol"},
		{"an old-protocol peer removal", &raft.Log{Index: 9, Type: raft.LogRemovePeerDeprecated}, "entry 9 is a peer change of raft's old protocol"},
	}
	for _, c := range cases {
		err := Vet(c.e)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Vet = %v, want an error saying %q", c.name, err, c.want)
		}
	}
	if err := VetConfiguration([]byte("not msgpack")); err == nil {
		t.Fatal("a snapshot's configuration that does not decode was accepted")
	}
}
