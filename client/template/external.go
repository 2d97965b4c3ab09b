package template

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"
)

// ExternalFunctionError is a template that calls functions reading from
// Consul, Vault or Nomad variables, which Drover does not have behind its
// templates. (Nomad's service catalog it has: funcs_services.go.)
type ExternalFunctionError struct {
	// Calls name each function, where it is called and what it reads.
	Calls []string
}

func (e *ExternalFunctionError) Error() string {
	return strings.Join(e.Calls, ", ") + ": Drover has no Consul, Vault or Nomad variables source for templates; put the value in the job (data, env or meta) instead"
}

// ErrUnsupportedFunction is a consul-template function Drover's renderer
// does not provide.
var ErrUnsupportedFunction = errors.New("function not supported by Drover's template renderer")

// externalFuncs are consul-template's functions that read from an outside
// system, with that system's name.
var externalFuncs = map[string]string{
	"caLeaf": "Consul", "caRoots": "Consul", "connect": "Consul", "datacenters": "Consul",
	"exportedServices": "Consul", "key": "Consul", "keyExists": "Consul", "keyOrDefault": "Consul",
	"ls": "Consul", "node": "Consul", "nodes": "Consul", "partitions": "Consul", "peerings": "Consul",
	"safeLs": "Consul", "safeTree": "Consul", "service": "Consul", "services": "Consul", "tree": "Consul",
	"pkiCert": "Vault", "secret": "Vault", "secrets": "Vault",
	"nomadVar": "Nomad variables", "nomadVarExists": "Nomad variables",
	"nomadVarList": "Nomad variables", "nomadVarListSafe": "Nomad variables",
}

// unsupportedFuncs are consul-template's other functions that Drover
// leaves out, with the reason.
var unsupportedFuncs = map[string]string{
	"byKey":                "it groups Consul key/value pairs, which Drover cannot read",
	"byMeta":               "it groups Consul services, which Drover cannot read",
	"byPort":               "it groups Consul services, which Drover cannot read",
	"byTag":                "it groups Consul or Nomad services, which Drover cannot read",
	"explode":              "it expands Consul key/value pairs, which Drover cannot read (explodeMap works on maps)",
	"mergeMap":             "it is not implemented",
	"mergeMapWithOverride": "it is not implemented",
	"plugin":               "it runs programs on the client (Nomad's default function_denylist refuses it too)",
	"writeToFile":          "it writes outside the template's destination (Nomad's default function_denylist refuses it too)",
	"sockaddr":             "it is not implemented",
	"toTOML":               "Drover has no TOML encoder",
	"spew_dump":            "debugging functions are not implemented",
	"spew_printf":          "debugging functions are not implemented",
	"spew_sdump":           "debugging functions are not implemented",
	"spew_sprintf":         "debugging functions are not implemented",
}

// refusedStubs lets a template that names a refused function parse, so
// that checkFunctions can name every such call with its position.
func refusedStubs() template.FuncMap {
	stub := func(...any) (string, error) { return "", ErrUnsupportedFunction }
	m := template.FuncMap{}
	for name := range externalFuncs {
		m[name] = stub
	}
	for name := range unsupportedFuncs {
		m[name] = stub
	}
	return m
}

// checkFunctions refuses a parsed template that calls an external or
// unsupported function anywhere, executed or not: a template that would
// block on Consul in Nomad must not render something else here.
func checkFunctions(t *template.Template) error {
	var external, unsupported []string
	seen := map[string]bool{}
	for _, tt := range t.Templates() {
		if tt.Tree == nil {
			continue
		}
		walkIdentifiers(tt.Tree.Root, func(n *parse.IdentifierNode) {
			sys, ext := externalFuncs[n.Ident]
			why, unsup := unsupportedFuncs[n.Ident]
			if (!ext && !unsup) || seen[n.Ident] {
				return
			}
			seen[n.Ident] = true
			loc, _ := tt.ErrorContext(n)
			if ext {
				external = append(external, fmt.Sprintf("%s (%s) reads from %s", n.Ident, loc, sys))
			} else {
				unsupported = append(unsupported, fmt.Sprintf("%s (%s): %s", n.Ident, loc, why))
			}
		})
	}
	sort.Strings(external)
	sort.Strings(unsupported)
	switch {
	case len(external) > 0:
		return &ExternalFunctionError{Calls: external}
	case len(unsupported) > 0:
		return fmt.Errorf("%w: %s", ErrUnsupportedFunction, strings.Join(unsupported, "; "))
	}
	return nil
}

// walkIdentifiers calls fn for every function name in the tree.
func walkIdentifiers(n parse.Node, fn func(*parse.IdentifierNode)) {
	switch n := n.(type) {
	case nil:
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkIdentifiers(c, fn)
		}
	case *parse.ActionNode:
		walkIdentifiers(n.Pipe, fn)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, fn)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, fn)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, fn)
	case *parse.TemplateNode:
		walkIdentifiers(n.Pipe, fn)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walkIdentifiers(c, fn)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walkIdentifiers(a, fn)
		}
	case *parse.ChainNode:
		walkIdentifiers(n.Node, fn)
	case *parse.IdentifierNode:
		fn(n)
	}
}

func walkBranch(b *parse.BranchNode, fn func(*parse.IdentifierNode)) {
	walkIdentifiers(b.Pipe, fn)
	walkIdentifiers(b.List, fn)
	walkIdentifiers(b.ElseList, fn)
}

var undefinedFunc = regexp.MustCompile(`function "([^"]+)" not defined`)

// explainParseError adds what a user needs to a parse error about a
// function text/template does not know.
func explainParseError(err error) error {
	m := undefinedFunc.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	if strings.HasPrefix(m[1], "sprig_") {
		return fmt.Errorf("%w (Drover's templates do not provide sprig functions)", err)
	}
	return fmt.Errorf("%w (not one of the consul-template functions Drover provides)", err)
}
