package rawexec

import (
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client/clock"
	"github.com/drover-sched/drover/client/drivers/executor"
)

// Name is the driver name used in jobspecs.
const Name = "raw_exec"

// EnableOption is the client option that enables the driver, the flat form
// of Nomad's `plugin "raw_exec" { config { enabled = true } }`.
const EnableOption = "driver.raw_exec.enable"

// New returns the raw_exec driver. Its default kill signal is SIGINT, as in
// Nomad; a task's kill_signal overrides it.
func New(logger hclog.Logger, clk clock.Clock, enabled bool) *executor.Driver {
	return executor.New(executor.Options{
		Name:          Name,
		Logger:        logger,
		Clock:         clk,
		Enabled:       enabled,
		DefaultSignal: syscall.SIGINT,
	})
}
