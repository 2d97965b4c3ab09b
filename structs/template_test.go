package structs

import (
	"strings"
	"testing"
	"time"
)

// TestTemplateValidationNamesGroupTaskAndIndex: each statically wrong
// template is refused with a message that says where it is and what would
// be right; a good template passes.
func TestTemplateValidationNamesGroupTaskAndIndex(t *testing.T) {
	good := Template{EmbeddedTmpl: "x={{ env \"A\" }}", DestPath: "local/app.conf", ChangeMode: "restart", Perms: "0640"}
	cases := []struct {
		name   string
		change func(*Template)
		want   string // "" means valid
	}{
		{"a good template", func(*Template) {}, ""},
		{"a source file instead of data", func(tm *Template) { tm.EmbeddedTmpl, tm.SourcePath = "", "local/app.tpl" }, ""},
		{"an interpolated destination is left to the client", func(tm *Template) { tm.DestPath = "${NOMAD_SECRETS_DIR}/../../x" }, ""},
		{"an absolute destination lands in the task directory", func(tm *Template) { tm.DestPath = "/etc/app.conf" }, ""},
		{"the shared alloc directory", func(tm *Template) { tm.DestPath = "../alloc/app.conf" }, ""},
		{"signal with its signal", func(tm *Template) { tm.ChangeMode, tm.ChangeSignal = "signal", "SIGHUP" }, ""},
		{"no destination", func(tm *Template) { tm.DestPath = "" }, `destination is missing`},
		{"a destination out of the alloc dir", func(tm *Template) { tm.DestPath = "../../etc/passwd" }, `destination "../../etc/passwd" escapes the allocation directory`},
		{"neither data nor source", func(tm *Template) { tm.EmbeddedTmpl = "" }, "needs data (the template inline) or source"},
		{"both data and source", func(tm *Template) { tm.SourcePath = "local/app.tpl" }, "has both data and source; set exactly one"},
		{"perms not octal", func(tm *Template) { tm.Perms = "0648" }, `perms "0648" is not an octal file mode`},
		{"perms too wide", func(tm *Template) { tm.Perms = "77777" }, `perms "77777" is not an octal file mode of at most 0777`},
		{"perms with a sign", func(tm *Template) { tm.Perms = "+644" }, `perms "+644" is not an octal file mode`},
		{"perms with Go's octal prefix", func(tm *Template) { tm.Perms = "0o644" }, `perms "0o644" is not an octal file mode`},
		{"perms without a leading zero", func(tm *Template) { tm.Perms = "755" }, ""},
		{"perms 0777", func(tm *Template) { tm.Perms = "0777" }, ""},
		{"perms setuid", func(tm *Template) { tm.Perms = "4755" }, `perms "4755" of "local/app.conf" sets the setuid bit; templates may not make setuid, setgid or sticky files; use "0755"`},
		{"perms setgid", func(tm *Template) { tm.Perms = "02750" }, `perms "02750" of "local/app.conf" sets the setgid bit; templates may not make setuid, setgid or sticky files; use "0750"`},
		{"perms sticky", func(tm *Template) { tm.Perms = "1777" }, `perms "1777" of "local/app.conf" sets the sticky bit; templates may not make setuid, setgid or sticky files; use "0777"`},
		{"perms setuid and setgid", func(tm *Template) { tm.Perms = "6711" }, `perms "6711" of "local/app.conf" sets the setuid and setgid bits; templates may not make setuid, setgid or sticky files; use "0711"`},
		{"perms with every special bit", func(tm *Template) { tm.Perms = "7000" }, `perms "7000" of "local/app.conf" sets the setuid, setgid and sticky bits; templates may not make setuid, setgid or sticky files; use "0000"`},
		{"uid and gid of root", func(tm *Template) { tm.Uid, tm.Gid = intPtr(0), intPtr(0) }, ""},
		{"uid and gid -1 leave the owner alone", func(tm *Template) { tm.Uid, tm.Gid = intPtr(-1), intPtr(-1) }, ""},
		{"uid below -1", func(tm *Template) { tm.Uid = intPtr(-2) }, `uid must be a user or group ID >= 0, or -1 to leave the file owned by the client, got -2`},
		{"gid below -1", func(tm *Template) { tm.Gid = intPtr(-5) }, `gid must be a user or group ID >= 0, or -1 to leave the file owned by the client, got -5`},
		{"an unknown change mode", func(tm *Template) { tm.ChangeMode = "reload" }, `change_mode "reload" must be noop, restart, signal or script`},
		{"signal without a signal", func(tm *Template) { tm.ChangeMode = "signal" }, `change_signal is required with change_mode "signal"`},
		{"script without a script", func(tm *Template) { tm.ChangeMode = "script" }, `change_script with a command is required`},
		{"a negative splay", func(tm *Template) { tm.Splay = -time.Second }, "splay must be >= 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := testJob()
			tm := good
			tc.change(&tm)
			job.TaskGroups[0].Tasks[0].Templates = []*Template{{EmbeddedTmpl: "ok", DestPath: "local/ok"}, &tm}
			job.Canonicalize()
			err := job.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid template refused: %v", err)
				}
				return
			}
			want := `group "web" task "server" template[1]: ` + tc.want
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want one containing %q", err, want)
			}
		})
	}
}

func intPtr(v int) *int { return &v }
