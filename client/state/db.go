package state

import (
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// DB is the client's local state.
type DB interface {
	// PutAlloc stores the server's allocation (replacing an older copy).
	PutAlloc(a *structs.Allocation) error
	// GetAllocs returns every stored allocation.
	GetAllocs() ([]*structs.Allocation, error)
	// DeleteAlloc removes an allocation with its task data.
	DeleteAlloc(allocID string) error

	PutTaskState(allocID, task string, s *structs.TaskState) error
	// GetTaskState returns nil, nil when there is none.
	GetTaskState(allocID, task string) (*structs.TaskState, error)

	PutTaskHandle(allocID, task string, h *drivers.TaskHandle) error
	// GetTaskHandle returns nil, nil when there is none.
	GetTaskHandle(allocID, task string) (*drivers.TaskHandle, error)
	DeleteTaskHandle(allocID, task string) error

	Close() error
}
