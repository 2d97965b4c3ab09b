package drivers

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// LookupTask returns tasks[id], read under mu, or an error wrapping
// ErrTaskNotFound: how every driver's task calls find their task. The
// driver keeps the map in one field that it never replaces, so passing
// the map itself (not the field) is safe without the lock.
func LookupTask[T any](mu *sync.Mutex, tasks map[string]T, id string) (T, error) {
	mu.Lock()
	defer mu.Unlock()
	t, ok := tasks[id]
	if !ok {
		return t, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return t, nil
}

// WaitLocked is WaitExit for a driver whose task publishes *result under
// mu before it closes done.
func WaitLocked(ctx context.Context, done <-chan struct{}, mu *sync.Mutex, result **ExitResult) <-chan *ExitResult {
	return WaitExit(ctx, done, func() *ExitResult {
		mu.Lock()
		defer mu.Unlock()
		return *result
	})
}

// Exited reports whether the task has exited, not merely stopped being
// waited for: done is closed and *result, read under mu, is set.
func Exited(done <-chan struct{}, mu *sync.Mutex, result **ExitResult) bool {
	select {
	case <-done:
		mu.Lock()
		defer mu.Unlock()
		return *result != nil
	default:
		return false
	}
}

// StatusOf is the status of a task from what its driver records: running
// since startedAt, or, once result is set, exited at completedAt. The
// caller holds the lock that guards result and completedAt.
func StatusOf(id string, startedAt time.Time, result *ExitResult, completedAt time.Time) *TaskStatus {
	s := &TaskStatus{ID: id, State: TaskStateRunning, StartedAt: startedAt}
	if result != nil {
		s.State, s.ExitResult, s.CompletedAt = TaskStateExited, result, completedAt
	}
	return s
}
