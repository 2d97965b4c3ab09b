package state

import (
	"encoding/json"
	"sync"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// MemDB is an in-memory DB. Values are stored as JSON, like BoltDB, so a
// test sees exactly what a restart would read back.
type MemDB struct {
	mu      sync.Mutex
	allocs  map[string][]byte
	states  map[[2]string][]byte
	handles map[[2]string][]byte
}

// NewMemDB returns an empty MemDB.
func NewMemDB() *MemDB {
	return &MemDB{allocs: map[string][]byte{}, states: map[[2]string][]byte{}, handles: map[[2]string][]byte{}}
}

func (m *MemDB) PutAlloc(a *structs.Allocation) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.allocs[a.ID] = b
	return nil
}

func (m *MemDB) GetAllocs() ([]*structs.Allocation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*structs.Allocation
	for _, b := range m.allocs {
		var a structs.Allocation
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, err
		}
		out = append(out, &a)
	}
	return out, nil
}

func (m *MemDB) DeleteAlloc(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.allocs, id)
	for k := range m.states {
		if k[0] == id {
			delete(m.states, k)
		}
	}
	for k := range m.handles {
		if k[0] == id {
			delete(m.handles, k)
		}
	}
	return nil
}

func (m *MemDB) PutTaskState(allocID, task string, s *structs.TaskState) error {
	return m.putJSON(m.states, allocID, task, s)
}

func (m *MemDB) GetTaskState(allocID, task string) (*structs.TaskState, error) {
	return getJSON[structs.TaskState](m, m.states, allocID, task)
}

func (m *MemDB) PutTaskHandle(allocID, task string, h *drivers.TaskHandle) error {
	return m.putJSON(m.handles, allocID, task, h)
}

func (m *MemDB) GetTaskHandle(allocID, task string) (*drivers.TaskHandle, error) {
	return getJSON[drivers.TaskHandle](m, m.handles, allocID, task)
}

// putJSON stores v as JSON in one of the task maps, as the bolt store
// would (so that a test sees what encoding loses).
func (m *MemDB) putJSON(into map[[2]string][]byte, allocID, task string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	into[[2]string{allocID, task}] = b
	return nil
}

// getJSON decodes a task's entry of one of the task maps into a new T, or
// returns nil when there is none.
func getJSON[T any](m *MemDB, from map[[2]string][]byte, allocID, task string) (*T, error) {
	m.mu.Lock()
	b, ok := from[[2]string{allocID, task}]
	m.mu.Unlock()
	if !ok {
		return nil, nil
	}
	out := new(T)
	return out, json.Unmarshal(b, out)
}

func (m *MemDB) DeleteTaskHandle(allocID, task string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.handles, [2]string{allocID, task})
	return nil
}

// Close does nothing.
func (m *MemDB) Close() error { return nil }
