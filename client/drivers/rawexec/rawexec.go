package rawexec

import (
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/executor"
	"github.com/drover-sched/drover/helper/clock"
)

// Name is the driver name used in jobspecs.
const Name = "raw_exec"

// EnableOption is the client option that enables the driver, the flat form
// of Nomad's `plugin "raw_exec" { config { enabled = true } }`.
const EnableOption = "driver.raw_exec.enable"

// Driver is the raw_exec driver: the shared executor, declaring what its
// tasks see.
type Driver struct {
	*executor.Driver
}

// Capabilities: a raw_exec task sees the host's file system and starts
// from the agent's environment (less the client's env.denylist), as in
// Nomad; it runs as the agent's user.
func (*Driver) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{FSIsolation: drivers.FSIsolationNone, HostEnv: true}
}

// New returns the raw_exec driver. Its default kill signal is SIGINT, as in
// Nomad; a task's kill_signal overrides it.
func New(logger hclog.Logger, clk clock.Clock, enabled bool) *Driver {
	return &Driver{executor.New(executor.Options{
		Name:          Name,
		Logger:        logger,
		Clock:         clk,
		Enabled:       enabled,
		DefaultSignal: syscall.SIGINT,
	})}
}
