package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

const modulePath = "github.com/drover-sched/drover"

// importRules says which of Drover's own packages each package tree may
// import (DESIGN.md, "Layout"). A tree not listed may import anything; a
// tree inside a listed one follows its own rule, the most specific only.
// Test files are exempt: a scheduler test may use the real state store.
// An allowed entry is a tree, or with a leading "=" one package alone, not
// the packages under it.
var importRules = []importRule{
	{"structs", nil},
	{"acl", nil},
	{"helper", []string{"helper", "structs"}},
	{"scheduler", []string{"structs", "scheduler"}},
	{"nomad", []string{"structs", "scheduler", "nomad", "helper", "acl"}},
	// The leader's eval queues know nothing of the server or its state.
	{"nomad/broker", []string{"structs", "helper"}},
	// The deployment watcher reads state through its own State interface,
	// which the state store satisfies as it is, and writes through its Raft
	// interface: it needs neither the server nor nomad/state (helper is
	// for helper/clock).
	{"nomad/deploymentwatcher", []string{"structs", "helper"}},
	// The drainer reads a snapshot through its own State interface.
	{"nomad/drainer", []string{"structs", "helper"}},
	// The heartbeater reads nodes and allocs through its StateReader and
	// commits through its StatusWriter, both interfaces the server
	// implements: it needs neither the server nor nomad/state (the state
	// store's interning of node IDs comes in as a function).
	{"nomad/heartbeat", []string{"structs", "helper"}},
	// The plan queue and applier read state through their own View and
	// StateSource interfaces, which the state store's snapshots satisfy,
	// and commit through their Raft interface: they need neither the
	// server nor nomad/state (helper is for helper/clock, rpcx and
	// telemetry).
	{"nomad/planner", []string{"structs", "helper"}},
	// The fixtures the applier's tests share, over the real state store;
	// only tests import them (testOnlyPackages).
	{"nomad/planner/plannertest", []string{"structs", "helper", "nomad/planner", "nomad/state", "scheduler/feasible"}},
	// The FSM owns its state store and tells the server what it applied
	// through its Hooks, EventSink and AllocSink interfaces: it needs
	// neither the server nor the server's other parts (helper is for rpcx,
	// the snapshot codec; clientreport decides a client's report).
	{"nomad/fsm", []string{"structs", "helper", "nomad/state", "nomad/stream", "nomad/raftlog", "nomad/clientreport"}},
	// The raft entry format: bytes, bounds and vetting, over rpcx's codec.
	// It knows nothing of the server or its state, so the FSM and the
	// transport can share it without a cycle.
	{"nomad/raftlog", []string{"structs", "helper/rpcx"}},
	// The decision on a client's report is a function of what it reads.
	{"nomad/clientreport", []string{"structs"}},
	{"client", []string{"structs", "client", "helper", "acl"}},
	{"api", []string{"api"}},
	{"jobspec", []string{"api", "jobspec"}},
	// The agent's configuration reads the defaults, bounds and settings
	// types of what it configures, never their running parts: the server
	// package for nomad.Config but none under it, and of the client only
	// its config, artifact, network and docker-driver packages.
	{"command/agent/config", []string{"structs", "helper", "=jobspec", "=nomad", "=client/config", "=client/artifact", "=client/network", "=client/drivers/docker"}},
	// The HTTP API reaches the agent only through the Deps it is built
	// with, never the agent itself, and the servers only through RPC: of
	// the server package it reads sentinel errors and defaults, of the
	// client the errors its handlers map to status codes.
	{"command/agent/httpapi", []string{"structs", "acl", "api", "=jobspec", "ui", "helper", "=command/agent/config", "=nomad",
		"=client", "client/allocdir", "client/checks", "=client/drivers", "client/hoststats", "=client/taskrunner"}},
}

func TestPackageImportRules(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := walkSources(func(path string) error {
		dir := filepath.ToSlash(filepath.Dir(path))
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if !strings.HasPrefix(p, modulePath+"/") {
				continue
			}
			target := strings.TrimPrefix(p, modulePath+"/")
			if testOnlyPackages[target] && !inTree(dir, target) {
				t.Errorf("%s imports %s, which only tests may import", path, target)
			}
		}
		rule := ruleFor(dir)
		if rule == nil {
			return nil
		}
		checked++
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if !strings.HasPrefix(p, modulePath+"/") {
				continue
			}
			target := strings.TrimPrefix(p, modulePath+"/")
			if !allowedImport(target, rule.allowed) {
				t.Errorf("%s imports %s, but %s/ may only import %v", path, target, rule.tree, rule.allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no files were checked; the walk is broken")
	}
}

// testOnlyPackages hold test fixtures: no package's non-test files may
// import them.
var testOnlyPackages = map[string]bool{"nomad/planner/plannertest": true, "command/agent/internal/apitest": true}

func inTree(dir, tree string) bool {
	return dir == tree || strings.HasPrefix(dir, tree+"/")
}

type importRule struct {
	tree    string
	allowed []string
}

// ruleFor returns the rule of the most specific tree dir is in, or nil.
func ruleFor(dir string) *importRule {
	best := -1
	for i, rule := range importRules {
		if inTree(dir, rule.tree) && (best < 0 || len(rule.tree) > len(importRules[best].tree)) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	return &importRules[best]
}

func allowedImport(target string, allowed []string) bool {
	for _, a := range allowed {
		if pkg, ok := strings.CutPrefix(a, "="); ok {
			if target == pkg {
				return true
			}
			continue
		}
		if target == a || strings.HasPrefix(target, a+"/") {
			return true
		}
	}
	return false
}

// serverInternals are the server's own packages: its state store, its
// FSM and its event broker. Nothing outside nomad/ reaches into them; the agent, the
// CLI and the client talk to the server through its RPC shapes in
// structs and the methods of nomad.Server.
var serverInternals = []string{"nomad/state", "nomad/fsm", "nomad/stream"}

func TestNothingOutsideTheServerImportsItsInternals(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := walkSources(func(path string) error {
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "nomad" || strings.HasPrefix(dir, "nomad/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			target := strings.TrimPrefix(strings.Trim(imp.Path.Value, `"`), modulePath+"/")
			if allowedImport(target, serverInternals) {
				t.Errorf("%s imports %s, one of the server's internals %v: use nomad.Server's methods or structs' shapes", path, target, serverInternals)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no files were checked; the walk is broken")
	}
}

func TestAllowedImport(t *testing.T) {
	if allowedImport("nomad/state", []string{"structs", "scheduler"}) {
		t.Fatal("scheduler must not be allowed to import nomad/state")
	}
	if !allowedImport("scheduler/feasible", []string{"scheduler"}) {
		t.Fatal("a sub-package of an allowed tree must be allowed")
	}
	if allowedImport("structsx", []string{"structs"}) {
		t.Fatal("a prefix that is not a path element must not match")
	}
	if !allowedImport("nomad", []string{"=nomad"}) || allowedImport("nomad/state", []string{"=nomad"}) {
		t.Fatal("an =entry must allow its package and nothing under it")
	}
	if r := ruleFor("command/agent/config"); r == nil || r.tree != "command/agent/config" || ruleFor("command/agent") != nil {
		t.Fatalf("command/agent/config follows %v, and command/agent must have no rule", r)
	}
	if r := ruleFor("command/agent/httpapi"); r == nil || r.tree != "command/agent/httpapi" {
		t.Fatalf("command/agent/httpapi follows %v", r)
	} else {
		for _, banned := range []string{"command/agent", "nomad/state", "nomad/stream", "nomad/fsm"} {
			if allowedImport(banned, r.allowed) {
				t.Fatalf("command/agent/httpapi may import %s", banned)
			}
		}
	}
	for dir, want := range map[string]string{"nomad": "nomad", "nomad/stream": "nomad", "nomad/planner": "nomad/planner", "nomad/planner/plannertest": "nomad/planner/plannertest"} {
		if r := ruleFor(dir); r == nil || r.tree != want {
			t.Fatalf("%s follows the rule of %v, want %s", dir, r, want)
		}
	}
	if ruleFor("command") != nil {
		t.Fatal("a tree without a rule got one")
	}
}

// walkSources calls fn with the path of every Go file of the module that is
// not a test, skipping hidden folders, testdata and bin.
func walkSources(fn func(path string) error) error {
	return filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		return fn(path)
	})
}
