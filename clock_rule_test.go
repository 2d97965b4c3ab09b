package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// There is one clock interface, helper/clock's: an interface elsewhere
// made of clock methods (Now with or without timers) would be a second
// one, with its own fake and its own idea of how timers fire under a
// test. A component's dependencies may include Now among other methods.
var clockMethods = map[string]bool{"Now": true, "After": true, "AfterFunc": true, "NewTimer": true, "AfterFuncAt": true, "NewTimerAt": true, "Since": true, "Sleep": true}

func TestOneClockInterface(t *testing.T) {
	fset := token.NewFileSet()
	found := 0
	err := walkSources(func(path string) error {
		if strings.HasPrefix(path, "third_party/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			it, ok := spec.Type.(*ast.InterfaceType)
			if !ok {
				return true
			}
			hasNow, onlyClock := false, true
			for _, m := range it.Methods.List {
				for _, name := range m.Names {
					hasNow = hasNow || name.Name == "Now"
					onlyClock = onlyClock && clockMethods[name.Name]
				}
				onlyClock = onlyClock && len(m.Names) > 0 // an embedded interface is more than a clock
			}
			if !hasNow || !onlyClock {
				return true
			}
			if filepath.ToSlash(filepath.Dir(path)) == "helper/clock" {
				found++
				return true
			}
			t.Errorf("%s: interface %s is a clock: use helper/clock's Clock", fset.Position(spec.Pos()), spec.Name.Name)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found != 1 {
		t.Fatalf("found %d clock interfaces in helper/clock, want 1: the walk is broken", found)
	}
}
