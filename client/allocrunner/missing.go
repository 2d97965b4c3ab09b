package allocrunner

import (
	"context"
	"fmt"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// missingDriver stands in for a driver this client does not run, so the
// task fails through the normal path with a clear Driver Failure event.
type missingDriver string

func (m missingDriver) err() error {
	return fmt.Errorf("driver %q is not enabled on this client", string(m))
}
func (m missingDriver) Name() string                     { return string(m) }
func (m missingDriver) Fingerprint() *structs.DriverInfo { return &structs.DriverInfo{} }
func (m missingDriver) StartTask(*drivers.TaskConfig) (*drivers.TaskHandle, error) {
	return nil, m.err()
}
func (m missingDriver) WaitTask(context.Context, string) (<-chan *drivers.ExitResult, error) {
	return nil, drivers.ErrTaskNotFound
}
func (m missingDriver) StopTask(string, time.Duration, string) error { return drivers.ErrTaskNotFound }
func (m missingDriver) DestroyTask(string, bool) error               { return drivers.ErrTaskNotFound }
func (m missingDriver) RecoverTask(*drivers.TaskHandle) error        { return drivers.ErrTaskNotFound }
func (m missingDriver) InspectTask(string) (*drivers.TaskStatus, error) {
	return nil, drivers.ErrTaskNotFound
}
func (m missingDriver) TaskStats(string) (*drivers.TaskResourceUsage, error) {
	return nil, drivers.ErrTaskNotFound
}
