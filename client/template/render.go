package template

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/template"
	"time"

	"github.com/drover-sched/drover/structs"
)

// Input is what rendering a task's templates needs.
type Input struct {
	// Templates are the task's template blocks, in job order.
	Templates []*structs.Template
	// TaskDir is the task's directory (<alloc dir>/<task>): relative
	// paths start here.
	TaskDir string
	// SharedDir is the alloc's shared directory (<alloc dir>/alloc).
	SharedDir string
	// Env is the task's environment: what `env` sees.
	Env map[string]string
	// Interpolate resolves ${...} in source and destination paths; nil
	// leaves them as they are.
	Interpolate func(string) string
	// Now is the clock `timestamp` reads; nil means time.Now.
	Now func() time.Time
	// Chown applies uid and gid; only a client running as root can.
	Chown bool
	// Owner, when set, is the user the task runs as (a driver that
	// isolates the task runs it as another user than the client's):
	// every rendered file and every directory a render creates is made
	// Owner's, and a template's uid and gid may only name Owner's own.
	// Nil (a task run as the client's user) honours uid and gid as
	// given. Either way no rendered file keeps setuid, setgid or sticky.
	Owner *Owner `json:",omitempty"`
	// Services is the native service catalog nomadService reads; nil
	// when no template uses it (see UsesServices).
	Services *ServiceData
}

// Error is one template that could not be rendered.
type Error struct {
	// Index is the template's position in the task, from 0.
	Index int
	// Destination is the template's destination as the job gives it.
	Destination string
	Err         error
}

func (e *Error) Error() string {
	return fmt.Sprintf("template[%d] (destination %q): %v", e.Index, e.Destination, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Render renders every template to its destination, in order, and returns
// the variables of the `env = true` templates (a later template's value
// wins). It stops at the first template that fails, with an *Error.
// Templates see the task's environment without the variables of env
// templates, so that the order of templates does not matter.
func Render(in Input) (map[string]string, error) {
	vars, _, err := render(in, func(int) {})
	return vars, err
}

// render is Render that calls starting with a template's index before it
// renders it, so that a child stopped by a limit can be said to have been
// at that template. It also returns the indexes of the templates whose
// destination's content changed (a re-render decides on change_mode by
// them).
func render(in Input, starting func(i int)) (map[string]string, []int, error) {
	sb, err := newSandbox(in.TaskDir, in.SharedDir)
	if err != nil {
		return nil, nil, err
	}
	if in.Interpolate == nil {
		in.Interpolate = func(s string) string { return s }
	}
	if in.Now == nil {
		in.Now = time.Now
	}
	vars := map[string]string{}
	var changed []int
	for i, t := range in.Templates {
		starting(i)
		got, diff, err := renderOne(&in, sb, t)
		if err != nil {
			return nil, nil, &Error{Index: i, Destination: t.DestPath, Err: err}
		}
		if diff {
			changed = append(changed, i)
		}
		for k, v := range got {
			vars[k] = v
		}
	}
	return vars, changed, nil
}

func renderOne(in *Input, sb *sandbox, t *structs.Template) (map[string]string, bool, error) {
	out, changed, err := renderOneOut(in, sb, t)
	if err != nil {
		return nil, false, err
	}
	if !t.Envvars {
		return nil, changed, nil
	}
	vars, err := ParseEnvFile(out)
	return vars, changed, err
}

// renderOneOut renders t to its destination and returns its output and
// whether the destination held something else before.
func renderOneOut(in *Input, sb *sandbox, t *structs.Template) ([]byte, bool, error) {
	if t.DestPath == "" {
		return nil, false, errors.New("destination is missing")
	}
	dest, escapes := sb.clientPath(in.Interpolate(t.DestPath), true)
	if escapes {
		return nil, false, fmt.Errorf("destination %s: %w", dest, ErrPathEscapes)
	}
	mode, err := fileModeOf(t, in.Chown, in.Owner)
	if err != nil {
		return nil, false, err
	}
	text, name, err := templateText(in, sb, t)
	if err != nil {
		return nil, false, err
	}
	out, err := execute(name, text, t, &funcEnv{env: in.Env, sb: sb, now: in.Now, services: in.Services})
	if err != nil {
		return nil, false, err
	}
	old, rerr := sb.readFile(dest)
	changed := rerr != nil || !bytes.Equal(old, out)
	if err := sb.writeFile(dest, out, mode); err != nil {
		return nil, false, err
	}
	return out, changed, nil
}

// templateText is the template's text (data, or the source file) and the
// name its parse errors are reported under.
func templateText(in *Input, sb *sandbox, t *structs.Template) (string, string, error) {
	switch {
	case t.EmbeddedTmpl != "" && t.SourcePath != "":
		return "", "", errors.New("has both data and source; set exactly one")
	case t.EmbeddedTmpl != "":
		return t.EmbeddedTmpl, filepath.Base(t.DestPath), nil
	case t.SourcePath == "":
		return "", "", errors.New("has neither data nor source")
	}
	src, escapes := sb.clientPath(in.Interpolate(t.SourcePath), false)
	if escapes {
		return "", "", fmt.Errorf("source %s: %w", src, ErrPathEscapes)
	}
	data, err := sb.readFile(src)
	if err != nil {
		return "", "", fmt.Errorf("source: %w", err)
	}
	return string(data), filepath.Base(src), nil
}

// Owner is a task's user, by number.
type Owner struct {
	UID, GID int
}

// fileModeOf reads perms (octal, "0644" when unset) and, when the client
// may chown, the owner. The setuid, setgid and sticky bits are dropped
// whatever perms asks: a job may not make a set-id program on the host
// (job validation refuses them too; this is the defence behind it).
func fileModeOf(t *structs.Template, chown bool, owner *Owner) (fileMode, error) {
	m := fileMode{perms: 0o644, uid: -1, gid: -1, dirUID: -1, dirGID: -1}
	if t.Perms != "" {
		v, err := strconv.ParseUint(t.Perms, 8, 12)
		if err != nil {
			return m, fmt.Errorf("perms %q is not an octal file mode (e.g. \"0644\")", t.Perms)
		}
		// Only the permission bits: a template is text a job's author
		// wrote, rendered by the client (root, often), so a setuid or
		// setgid bit would hand the task a way to run as that owner.
		// Validation refuses such perms; this is for jobs that got
		// past it (stored before the rule).
		m.perms = os.FileMode(v & 0o777)
	}
	if !chown {
		return m, nil
	}
	if owner == nil {
		if t.Uid != nil {
			m.uid = *t.Uid
		}
		if t.Gid != nil {
			m.gid = *t.Gid
		}
		return m, nil
	}
	if t.Uid != nil && *t.Uid != owner.UID {
		return m, fmt.Errorf("uid %d is not the task's user (uid %d): a template of a task run as another user may only be owned by that user", *t.Uid, owner.UID)
	}
	if t.Gid != nil && *t.Gid != owner.GID {
		return m, fmt.Errorf("gid %d is not the task's group (gid %d): a template of a task run as another user may only be owned by that user's group", *t.Gid, owner.GID)
	}
	m.uid, m.gid, m.dirUID, m.dirGID = owner.UID, owner.GID, owner.UID, owner.GID
	return m, nil
}

// execute parses and runs one template.
func execute(name, text string, t *structs.Template, fe *funcEnv) ([]byte, error) {
	tmpl := template.New(name).Delims(t.LeftDelim, t.RightDelim)
	if t.ErrMissingKey {
		tmpl.Option("missingkey=error")
	} else {
		tmpl.Option("missingkey=zero")
	}
	fe.tmpl = tmpl
	tmpl.Funcs(funcMap(fe))
	if _, err := tmpl.Parse(text); err != nil {
		return nil, fmt.Errorf("parse: %w", explainParseError(err))
	}
	if err := checkFunctions(tmpl); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&limitedWriter{w: &b, left: maxOutput}, nil); err != nil {
		return nil, fmt.Errorf("execute: %w", err)
	}
	return b.Bytes(), nil
}

// errOutputTooLarge stops a render that would write more than maxOutput.
var errOutputTooLarge = fmt.Errorf("rendered output is larger than %d MiB", maxOutput>>20)

type limitedWriter struct {
	w    io.Writer
	left int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > l.left {
		return 0, errOutputTooLarge
	}
	l.left -= len(p)
	return l.w.Write(p)
}
