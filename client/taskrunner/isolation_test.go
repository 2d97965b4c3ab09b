package taskrunner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/drivers/rawexec"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/client/taskuser"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// isolated is a driver that declares a chroot and no host environment,
// as exec does once it isolates its tasks. It wraps a real driver, so a
// test runs a real process with the environment and directories the
// task runner prepared.
type isolated struct {
	drivers.Driver
}

func (isolated) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{FSIsolation: drivers.FSIsolationChroot, HostEnv: false}
}

// agentEnv is an agent's environment as the red team found it.
var agentEnv = map[string]string{
	"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC", "HOME": "/root",
	"AWS_SESSION_TOKEN": "aws-secret", "DATABASE_PASSWORD": "hunter2",
}

func TestEnvHookChoosesTheBaseAndDirsByTheDriversCapabilities(t *testing.T) {
	alloc := &structs.Allocation{ID: structs.GenerateUUID(), Name: "job.g[0]", JobID: "job", TaskGroup: "g", Namespace: "default",
		Job: &structs.Job{ID: "job", Name: "job"}}
	dir := allocdir.New(t.TempDir(), alloc.ID)
	td := dir.Task("web")
	raw := rawexec.New(nil, clock.NewFake(time.Time{}), true)
	t.Cleanup(raw.Shutdown)
	cases := []struct {
		name   string
		driver drivers.Driver
		want   map[string]string
		absent []string
	}{
		{"raw_exec gets the agent's environment and host paths", raw,
			map[string]string{"HOME": "/root", "DATABASE_PASSWORD": "hunter2", "NOMAD_TASK_DIR": td.LocalDir,
				"NOMAD_ALLOC_DIR": dir.SharedDir, "NOMAD_SECRETS_DIR": td.SecretsDir, "APP": "1"}, nil},
		{"an isolated driver gets only what Drover builds and in-task paths", isolated{raw},
			map[string]string{"PATH": agentEnv["PATH"], "LANG": "C.UTF-8", "TZ": "UTC", "NOMAD_TASK_DIR": "/local",
				"NOMAD_ALLOC_DIR": "/alloc", "NOMAD_SECRETS_DIR": "/secrets", "APP": "1", "NOMAD_TASK_NAME": "web"},
			[]string{"HOME", "AWS_SESSION_TOKEN", "DATABASE_PASSWORD"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hook := &envHook{node: &structs.Node{ID: "n"}, region: "global", hostEnv: agentEnv, driver: c.driver}
			req := &PrestartRequest{Alloc: alloc, Task: &structs.Task{Name: "web", Env: map[string]string{"APP": "1"}}, AllocDir: dir, TaskDir: td}
			var resp PrestartResponse
			if err := hook.Prestart(context.Background(), req, &resp); err != nil {
				t.Fatal(err)
			}
			got := resp.Env.Map()
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			for _, k := range c.absent {
				if v, ok := got[k]; ok {
					t.Errorf("%s = %q reached the task", k, v)
				}
			}
		})
	}
}

// The finding: `user = "root"` ran an exec task as root. The client
// refuses it before anything starts, for good, naming the user and the
// setting.
func TestADeniedUserFailsTheTaskWithoutStartingIt(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "exec", User: "root", Config: map[string]any{"run_for": "1s"},
		RestartPolicy: &structs.RestartPolicy{Attempts: 5, Interval: time.Hour, Delay: time.Second, Mode: structs.RestartPolicyModeFail}}
	h := newHarness(t, task, structs.JobTypeService, isolated{drv}, clk)
	h.cfg.Users = taskuser.ParsePolicy(nil)
	h.tr = New(h.cfg)
	h.run(t)
	testutil.WaitFor(t, "task to fail", h.dead)
	s := h.tr.TaskState()
	if !s.Failed || s.Restarts != 0 || drv.Starts() != 0 {
		t.Fatalf("failed=%v restarts=%d starts=%d, want failed at once and never started", s.Failed, s.Restarts, drv.Starts())
	}
	var msg string
	for _, e := range s.Events {
		if e.Type == structs.TaskHookFailed {
			msg = e.DisplayMessage
		}
	}
	for _, want := range []string{`user "root"`, "user.denylist", "exec"} {
		if !strings.Contains(msg, want) {
			t.Errorf("event %q must name %s", msg, want)
		}
	}
}

// An exec-like task runs a real process that sees only the variables
// Drover built (a template's env too, which reads the task's environment,
// not the agent's), and finds its directories and rendered files given to
// its user.
func TestAnIsolatedTaskSeesOnlyItsOwnEnvironmentAndOwnsItsDirectories(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the task's directories to nobody")
	}
	clk := clock.NewFake(time.Time{})
	raw := rawexec.New(nil, clk, true)
	defer raw.Shutdown()
	task := rawTask("web", `env | sort`)
	task.Driver = "exec"
	task.Templates = []*structs.Template{
		{DestPath: "${NOMAD_SECRETS_DIR}/t.env", Envvars: true, EmbeddedTmpl: "FROM_TEMPLATE=[{{ env \"AWS_SESSION_TOKEN\" }}][{{ env \"NOMAD_TASK_DIR\" }}]\n"},
		{DestPath: "local/conf/app.conf", EmbeddedTmpl: "x"},
	}
	h := newHarness(t, task, structs.JobTypeBatch, isolated{raw}, clk)
	h.cfg.HostEnv = agentEnv
	h.cfg.Users = taskuser.ParsePolicy(nil)
	h.tr = New(h.cfg)
	h.run(t)
	testutil.WaitFor(t, "task to finish", h.dead)
	if s := h.tr.TaskState(); s.Failed {
		t.Fatalf("task failed: %+v", s.Events)
	}
	out, err := os.ReadFile(filepath.Join(h.dir.LogDir, "web.stdout.0"))
	if err != nil {
		t.Fatal(err)
	}
	env := string(out)
	for _, want := range []string{"FROM_TEMPLATE=[][/local]\n", "NOMAD_TASK_DIR=/local\n", "PATH=" + agentEnv["PATH"] + "\n", "WHERE=linux\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("the task's environment lacks %q:\n%s", want, env)
		}
	}
	for _, leak := range []string{"aws-secret", "hunter2", "HOME=/root"} {
		if strings.Contains(env, leak) {
			t.Errorf("the agent's %q reached the task:\n%s", leak, env)
		}
	}
	td := h.dir.Task("web")
	for _, p := range []string{td.LocalDir, td.SecretsDir, td.TmpDir, filepath.Join(td.LocalDir, "conf"),
		filepath.Join(td.LocalDir, "conf/app.conf"), filepath.Join(td.SecretsDir, "t.env")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 {
			t.Errorf("%s is owned by %d, want nobody (65534)", p, st.Uid)
		}
	}
}

// For an isolated task the client fetches artifacts and renders
// templates to the host paths of the directories the task sees at /alloc
// and /local, and an artifact with chown = true goes to the user the task
// runs as, the driver's default (nobody) included.
func TestAnIsolatedTasksArtifactsAndTemplatesLandWhereItSeesThem(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	srv := newArtifactServer(t, map[string][]byte{"/tool.tar.gz": scriptTarball(t, "echo hi\n")})
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "exec", Config: map[string]any{"run_for": "1ms"},
		Artifacts: []*structs.TaskArtifact{{GetterSource: srv.URL + "/tool.tar.gz", RelativeDest: "${NOMAD_TASK_DIR}/tool", Chown: true}},
		Templates: []*structs.Template{{DestPath: "${NOMAD_ALLOC_DIR}/data/shared.conf", EmbeddedTmpl: "dir={{ env \"NOMAD_ALLOC_DIR\" }}"}}}
	h := newHarness(t, task, structs.JobTypeBatch, isolated{drv}, clk)
	h.cfg.Users = taskuser.ParsePolicy(nil)
	h.tr = New(h.cfg)
	h.run(t)
	testutil.WaitForWhile(t, "task to finish", h.dead, func() { clk.Advance(time.Millisecond) })
	if s := h.tr.TaskState(); s.Failed {
		t.Fatalf("task failed: %+v", s.Events)
	}
	td := h.dir.Task("t")
	script := filepath.Join(td.LocalDir, "tool", "bin", "run.sh")
	fi, err := os.Stat(script)
	if err != nil {
		t.Fatalf("the artifact is not in local/ on the host: %v", err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 {
		t.Errorf("the chown = true artifact is owned by %d, want nobody (65534)", st.Uid)
	}
	b, err := os.ReadFile(filepath.Join(h.dir.SharedDir, "data", "shared.conf"))
	if err != nil || string(b) != "dir=/alloc" {
		t.Fatalf("the template must land in the host's alloc/data and read the in-task path: %q, %v", b, err)
	}
}
