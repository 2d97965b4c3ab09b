package api

import (
	"strings"
	"time"
)

// Template is a file the client renders into the task directory before the
// task starts, and re-renders when its sources change. Drover keeps
// templates as data until the client gains a renderer.
type Template struct {
	SourcePath   *string
	DestPath     *string
	EmbeddedTmpl *string

	// ChangeMode is what happens on re-render: "restart", "signal",
	// "script" or "noop".
	ChangeMode    *string
	ChangeScript  *ChangeScript
	ChangeSignal  *string
	Once          *bool
	Splay         *time.Duration
	Perms         *string
	Uid           *int
	Gid           *int
	LeftDelim     *string
	RightDelim    *string
	Envvars       *bool
	Wait          *WaitConfig
	ErrMissingKey *bool
}

// Canonicalize fills unset fields. The change signal is upper-cased so that
// "sighup" and "SIGHUP" compare equal.
func (t *Template) Canonicalize() {
	if t.SourcePath == nil {
		t.SourcePath = new("")
	}
	if t.DestPath == nil {
		t.DestPath = new("")
	}
	if t.EmbeddedTmpl == nil {
		t.EmbeddedTmpl = new("")
	}
	if t.ChangeMode == nil {
		t.ChangeMode = new("restart")
	}
	switch {
	case t.ChangeSignal != nil:
		t.ChangeSignal = new(strings.ToUpper(*t.ChangeSignal))
	case *t.ChangeMode == "signal":
		t.ChangeSignal = new("SIGHUP")
	default:
		t.ChangeSignal = new("")
	}
	if t.ChangeScript != nil {
		t.ChangeScript.Canonicalize()
	}
	if t.Once == nil {
		t.Once = new(false)
	}
	if t.Splay == nil {
		t.Splay = new(5 * time.Second)
	}
	if t.Perms == nil {
		t.Perms = new("0644")
	}
	if t.LeftDelim == nil {
		t.LeftDelim = new("{{")
	}
	if t.RightDelim == nil {
		t.RightDelim = new("}}")
	}
	if t.Envvars == nil {
		t.Envvars = new(false)
	}
	if t.ErrMissingKey == nil {
		t.ErrMissingKey = new(false)
	}
}

// ChangeScript is the script run inside the task when a template with
// change mode "script" is re-rendered.
type ChangeScript struct {
	Command     *string
	Args        []string
	Timeout     *time.Duration
	FailOnError *bool
}

// Canonicalize fills unset fields: no arguments, 5s timeout, errors ignored.
func (c *ChangeScript) Canonicalize() {
	if c.Command == nil {
		c.Command = new("")
	}
	if c.Args == nil {
		c.Args = []string{}
	}
	if c.Timeout == nil {
		c.Timeout = new(5 * time.Second)
	}
	if c.FailOnError == nil {
		c.FailOnError = new(false)
	}
}

// WaitConfig bounds how long a template waits for its sources to settle
// before rendering.
type WaitConfig struct {
	Min *time.Duration
	Max *time.Duration
}
