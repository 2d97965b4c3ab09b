package agent

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/command/agent/config"
)

// The finding: a second agent on the same data dir hung silently. It must
// be refused at once, naming the dir and the PID that holds it.
func TestASecondAgentOnTheSameDataDirIsRefusedAtOnce(t *testing.T) {
	first := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false; c.DevMode = false })
	dir := first.Config().DataDir

	cfg := config.Dev()
	cfg.DevMode = false
	cfg.Client.Enabled = false
	cfg.BindAddr = "127.0.0.1"
	cfg.Ports = config.Ports{}
	cfg.DataDir = dir
	start := time.Now()
	a, err := NewAgent(cfg, hclog.NewNullLogger())
	if err == nil {
		a.Shutdown()
		t.Fatal("a second agent on a data dir in use must be refused")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the refusal took %s; it must come at once", took)
	}
	for _, want := range []string{"data_dir " + dir + " is in use by another agent", fmt.Sprintf("(PID %d)", os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q should mention %q", err, want)
		}
	}

	// Once the first is gone, the dir is free again.
	if err := first.Shutdown(); err != nil {
		t.Fatal(err)
	}
	lock, err := lockDataDir(dir)
	if err != nil {
		t.Fatalf("a released data dir must be lockable: %v", err)
	}
	lock.release()
}
