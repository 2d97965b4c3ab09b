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
		if _, err := strconv.ParseUint(t.Perms, 8, 12); err != nil {
			p.add("perms %q is not an octal file mode (e.g. \"0644\")", t.Perms)
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
