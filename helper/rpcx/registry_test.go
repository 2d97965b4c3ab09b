package rpcx

import (
	"io"
	"log"
	"maps"
	"net/rpc"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// mixed has one method of each shape net/rpc skips, and one it serves.
type mixed struct{}

type unexportedArgs struct{}

func (*mixed) Served(args *EchoArgs, reply *EchoReply) error { return nil }

//lint:ignore U1000 it exists to be skipped
func (*mixed) lowercase(args *EchoArgs, reply *EchoReply) error { return nil }

func (*mixed) NoError(args *EchoArgs, reply *EchoReply)                 {}
func (*mixed) TwoResults(args *EchoArgs, reply *EchoReply) (int, error) { return 0, nil }
func (*mixed) OneArgument(args *EchoArgs) error                         { return nil }
func (*mixed) ReplyNotAPointer(args *EchoArgs, reply EchoReply) error   { return nil }
func (*mixed) ArgsOfAnUnexportedType(args *unexportedArgs, reply *EchoReply) error {
	return nil
}
func (*mixed) ResultNotAnError(args *EchoArgs, reply *EchoReply) string { return "" }

// none has no method that can be served.
type none struct{}

func (none) Helper() {}

func TestRegisterServesTheMethodsNetRPCWould(t *testing.T) {
	got := slices.Sorted(maps.Keys(suitableMethods(reflect.TypeOf(&mixed{}))))
	if want := []string{"Served"}; !slices.Equal(got, want) {
		t.Fatalf("served methods %v, want %v", got, want)
	}
}

// TestRegisterRefusesWhatNetRPCRefuses registers the same receivers with
// net/rpc and with the Server, one after another under one name space, and
// expects the same ones refused.
func TestRegisterRefusesWhatNetRPCRefuses(t *testing.T) {
	ours := NewServer(nil)
	defer ours.Shutdown()
	theirs := rpc.NewServer()
	// net/rpc also logs each refusal through the standard logger.
	log.SetOutput(io.Discard)
	defer log.SetOutput(os.Stderr)
	for _, tc := range []struct {
		name    string
		service string
		rcvr    any
		refused string // part of our error; "" if accepted
	}{
		{"a pointer with suitable methods", "Test", newTestService(), ""},
		{"a value with value-receiver methods", "Shapes", shapes{}, ""},
		{"a receiver with some unsuitable methods", "Mixed", &mixed{}, ""},
		{"a name already taken", "Test", newTestService(), "already defined"},
		{"no name", "", newTestService(), "no service name"},
		{"a value whose methods need a pointer", "Value", mixed{}, "pass a pointer"},
		{"a receiver with no suitable method", "None", none{}, "no exported methods of suitable type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ourErr := ours.Register(tc.service, tc.rcvr)
			theirErr := theirs.RegisterName(tc.service, tc.rcvr)
			if (ourErr == nil) != (theirErr == nil) {
				t.Fatalf("ours: %v, net/rpc: %v", ourErr, theirErr)
			}
			if tc.refused == "" {
				if ourErr != nil {
					t.Fatalf("refused: %v", ourErr)
				}
				return
			}
			if ourErr == nil || !strings.Contains(ourErr.Error(), tc.refused) {
				t.Fatalf("want an error saying %q, got %v", tc.refused, ourErr)
			}
		})
	}
}

func TestMethodsListsEveryServedMethodAndNewCallValuesMakesItsTypes(t *testing.T) {
	s := NewServer(nil)
	if err := s.Register("Mixed", &mixed{}); err != nil {
		t.Fatal(err)
	}
	if got := s.Methods(); !slices.Equal(got, []string{"Mixed.Served"}) {
		t.Fatalf("Methods = %v, want only the method the dispatcher serves", got)
	}
	args, reply, err := s.NewCallValues("Mixed.Served")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := args.(*EchoArgs); !ok {
		t.Fatalf("args are %T, want *EchoArgs", args)
	}
	if _, ok := reply.(*EchoReply); !ok {
		t.Fatalf("reply is %T, want *EchoReply", reply)
	}
	if _, _, err := s.NewCallValues("Mixed.lowercase"); err == nil || !strings.Contains(err.Error(), "can't find method") {
		t.Fatalf("an unserved method: %v", err)
	}
}
