package structs

import (
	"path/filepath"
	"strconv"
	"strings"
)

// Template change modes, as in Nomad. Drover's template sources are
// static (see client/template), so no mode ever fires; they are checked
// so that a job valid in Drover is valid in Nomad.
const (
	TemplateChangeModeNoop    = "noop"
	TemplateChangeModeRestart = "restart"
	TemplateChangeModeSignal  = "signal"
	TemplateChangeModeScript  = "script"
)

// validate checks what can be known of a template without rendering it:
// the rest (paths after interpolation, the template text) is checked by
// the client before the task starts.
func (t *Template) validate(p problems) {
	switch {
	case t.DestPath == "":
		p.add(`destination is missing (e.g. destination = "local/app.conf")`)
	case !strings.Contains(t.DestPath, "${") && !filepath.IsLocal(filepath.Join("task", t.DestPath)):
		p.add("destination %q escapes the allocation directory (use a path inside the task directory, e.g. \"local/app.conf\")", t.DestPath)
	}
	switch {
	case t.EmbeddedTmpl == "" && t.SourcePath == "":
		p.add("needs data (the template inline) or source (a template file on the client), got neither")
	case t.EmbeddedTmpl != "" && t.SourcePath != "":
		p.add("has both data and source; set exactly one")
	}
	if t.Perms != "" {
		t.validatePerms(p)
	}
	for _, id := range []struct {
		name string
		v    *int
	}{{"uid", t.Uid}, {"gid", t.Gid}} {
		if id.v != nil && *id.v < -1 {
			p.add("%s must be a user or group ID >= 0, or -1 to leave the file owned by the client, got %d", id.name, *id.v)
		}
	}
	switch t.ChangeMode {
	case "", TemplateChangeModeNoop, TemplateChangeModeRestart:
	case TemplateChangeModeSignal:
		if t.ChangeSignal == "" {
			p.add(`change_signal is required with change_mode "signal" (e.g. change_signal = "SIGHUP")`)
		}
	case TemplateChangeModeScript:
		if t.ChangeScript == nil || t.ChangeScript.Command == "" {
			p.add(`change_script with a command is required with change_mode "script"`)
		}
	default:
		p.add("change_mode %q must be noop, restart, signal or script", t.ChangeMode)
	}
	if t.Splay < 0 {
		p.add("splay must be >= 0, got %v", t.Splay)
	}
}

// specialModeBits are the mode bits beyond the permissions, with the name
// a user knows each by.
var specialModeBits = []struct {
	bit  uint64
	name string
}{{0o4000, "setuid"}, {0o2000, "setgid"}, {0o1000, "sticky"}}

// validatePerms checks perms is an octal file mode of permission bits
// only. The client renders templates as its own user (root, usually) and
// may chown them to uid/gid, so a setuid or setgid template would let a
// job write itself a program that runs as another user, root included;
// the sticky bit has no use on a file. The client clears these bits too
// (client/template), for jobs stored before this rule.
func (t *Template) validatePerms(p problems) {
	v, err := strconv.ParseUint(t.Perms, 8, 12)
	if err != nil {
		p.add("perms %q is not an octal file mode of at most 0777 (e.g. \"0644\")", t.Perms)
		return
	}
	var set []string
	for _, s := range specialModeBits {
		if v&s.bit != 0 {
			set = append(set, s.name)
		}
	}
	if len(set) == 0 {
		return
	}
	what := "the " + set[0] + " bit"
	if len(set) > 1 {
		what = "the " + strings.Join(set[:len(set)-1], ", ") + " and " + set[len(set)-1] + " bits"
	}
	p.add("perms %q of %q sets %s; templates may not make setuid, setgid or sticky files; use \"%04o\"",
		t.Perms, t.DestPath, what, v&0o777)
}
