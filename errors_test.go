package main

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/broker"
	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/structs"
)

// sentinels are the coded sentinels that cross RPC, by name.
var sentinels = map[string]error{
	"structs.ErrNotLeader":               structs.ErrNotLeader,
	"structs.ErrNoLeader":                structs.ErrNoLeader,
	"structs.ErrNotFound":                structs.ErrNotFound,
	"structs.ErrNodeNotReady":            structs.ErrNodeNotReady,
	"structs.ErrNodeSecretDenied":        structs.ErrNodeSecretDenied,
	"structs.ErrNodeSecretMissing":       structs.ErrNodeSecretMissing,
	"structs.ErrIndexConflict":           structs.ErrIndexConflict,
	"structs.ErrInvalidTransition":       structs.ErrInvalidTransition,
	"structs.ErrTokenMismatch":           structs.ErrTokenMismatch,
	"structs.ErrPermissionDenied":        structs.ErrPermissionDenied,
	"structs.ErrTokenNotFound":           structs.ErrTokenNotFound,
	"structs.ErrACLDisabled":             structs.ErrACLDisabled,
	"structs.ErrACLBootstrapDone":        structs.ErrACLBootstrapDone,
	"structs.ErrJobRegistrationDisabled": structs.ErrJobRegistrationDisabled,
	"structs.ErrScalingBlocked":          structs.ErrScalingBlocked,
	"nomad.ErrBadRequest":                nomad.ErrBadRequest,
	"nomad.ErrTooLarge":                  nomad.ErrTooLarge,
	"nomad.ErrAnswerTooLarge":            nomad.ErrAnswerTooLarge,
	"nomad.ErrTooManyBlockingQueries":    nomad.ErrTooManyBlockingQueries,
	"nomad.ErrPeriodicNotTracked":        nomad.ErrPeriodicNotTracked,
	"broker.ErrBrokerDisabled":           broker.ErrBrokerDisabled,
	"broker.ErrNotOutstanding":           broker.ErrNotOutstanding,
	"planner.ErrQueueDisabled":           planner.ErrQueueDisabled,
	"client.ErrUnknownAlloc":             client.ErrUnknownAlloc,
	"client.ErrUnknownTask":              client.ErrUnknownTask,
	"client.ErrUnknownSignal":            client.ErrUnknownSignal,
	"client.ErrAllocNotTerminal":         client.ErrAllocNotTerminal,
	"rpcx.ErrUnknownService":             rpcx.ErrUnknownService,
	"rpcx.ErrUnknownMethod":              rpcx.ErrUnknownMethod,
}

// SentinelArgs asks SentinelService for one sentinel, optionally wrapped.
type SentinelArgs struct {
	Name string
	Wrap bool
}

// SentinelService returns the sentinel its caller names.
type SentinelService struct{}

func (SentinelService) Fail(args *SentinelArgs, reply *struct{}) error {
	err := sentinels[args.Name]
	if args.Wrap {
		err = fmt.Errorf("node 1234: applying the update: %w", err)
	}
	return err
}

// Every sentinel that crosses RPC comes back as itself, and as no other,
// bare or wrapped with context, over a real multiplexed session.
func TestEachSentinelSurvivesARealRPCAsItself(t *testing.T) {
	srv := rpcx.NewServer(hclog.NewNullLogger())
	if err := srv.Register("Sentinel", SentinelService{}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), ln) }()
	t.Cleanup(func() { srv.Shutdown(); <-served })
	pool := rpcx.NewConnPool(rpcx.PoolConfig{})
	t.Cleanup(pool.Shutdown)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, want := range sentinels {
		for _, wrap := range []bool{false, true} {
			err := pool.RPC(ctx, ln.Addr().String(), "Sentinel.Fail", &SentinelArgs{Name: name, Wrap: wrap}, &struct{}{})
			if !errors.Is(err, want) {
				t.Errorf("%s (wrapped %v): %T %q is not the sentinel", name, wrap, err, err)
			}
			if wrap && err.Error() != "node 1234: applying the update: "+want.Error() {
				t.Errorf("%s: the context was lost: %q", name, err)
			}
			for other, o := range sentinels {
				if other != name && errors.Is(err, o) {
					t.Errorf("%s (wrapped %v) also matches %s", name, wrap, other)
				}
			}
		}
	}
}

// No two sentinels share a text, so a log line or an HTTP body says which
// one it was, and no text contains another's, so the text matching kept
// for peers that send no codes cannot take one for another.
func TestSentinelTextsAreDistinct(t *testing.T) {
	for a, ea := range sentinels {
		for b, eb := range sentinels {
			if a != b && strings.Contains(ea.Error(), eb.Error()) {
				t.Errorf("%s's text %q contains %s's %q", a, ea, b, eb)
			}
		}
	}
}

// Codes are one namespace across Drover: every structs.NewCodedError call
// in the source has a literal code that no other call uses, and every
// sentinel it makes is in the table above.
func TestErrorCodesAreUnique(t *testing.T) {
	seen := map[string]string{}
	fset := token.NewFileSet()
	err := walkSources(func(path string) error {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isNewCodedError(call.Fun) || len(call.Args) != 2 {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Errorf("%s: the code of a NewCodedError is not a string literal", fset.Position(call.Pos()))
				return true
			}
			code, _ := strconv.Unquote(lit.Value)
			pos := fset.Position(call.Pos()).String()
			if prev, dup := seen[code]; dup {
				t.Errorf("code %q is used at %s and at %s", code, prev, pos)
			}
			if code == "" || strings.ContainsAny(code, " \t\n") {
				t.Errorf("%s: code %q is empty or has a space", pos, code)
			}
			seen[code] = pos
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, e := range sentinels {
		var c rpcx.ErrorCoder
		if errors.As(e, &c) {
			listed[c.ErrorCode()] = true
		}
	}
	for code, pos := range seen {
		if !listed[code] {
			t.Errorf("the sentinel with code %q (%s) is missing from this test's table", code, pos)
		}
	}
	if len(seen) < 20 {
		t.Fatalf("found only %d NewCodedError calls; the walk is broken", len(seen))
	}
}

func isNewCodedError(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name == "NewCodedError"
	case *ast.SelectorExpr:
		return f.Sel.Name == "NewCodedError"
	}
	return false
}
