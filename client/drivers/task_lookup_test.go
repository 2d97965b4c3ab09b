package drivers

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestLookupTaskFindsOrWrapsNotFound(t *testing.T) {
	var mu sync.Mutex
	tasks := map[string]*int{"a": new(int)}
	got, err := LookupTask(&mu, tasks, "a")
	if err != nil || got != tasks["a"] {
		t.Fatalf("got %v, %v; want the task", got, err)
	}
	got, err = LookupTask(&mu, tasks, "b")
	if !errors.Is(err, ErrTaskNotFound) || got != nil {
		t.Fatalf("got %v, %v; want nil and ErrTaskNotFound", got, err)
	}
	if err.Error() != ErrTaskNotFound.Error()+": b" {
		t.Fatalf("error %q does not name the task", err)
	}
}

func TestExitedNeedsDoneAndAResult(t *testing.T) {
	var mu sync.Mutex
	done := make(chan struct{})
	var res *ExitResult
	if Exited(done, &mu, &res) {
		t.Fatal("exited before done closed")
	}
	close(done)
	if Exited(done, &mu, &res) {
		t.Fatal("exited without a result: waiting only stopped")
	}
	mu.Lock()
	res = &ExitResult{ExitCode: 3}
	mu.Unlock()
	if !Exited(done, &mu, &res) {
		t.Fatal("not exited with done closed and a result")
	}
}

func TestWaitLockedDeliversTheResultSetUnderTheLock(t *testing.T) {
	var mu sync.Mutex
	done := make(chan struct{})
	var res *ExitResult
	ch := WaitLocked(context.Background(), done, &mu, &res)
	mu.Lock()
	res = &ExitResult{ExitCode: 7}
	mu.Unlock()
	close(done)
	select {
	case got := <-ch:
		if got == nil || got.ExitCode != 7 {
			t.Fatalf("got %+v, want exit code 7", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no result")
	}
	if _, ok := <-ch; ok {
		t.Fatal("channel not closed after the result")
	}
}

func TestStatusOfIsRunningUntilAResult(t *testing.T) {
	start, end := time.Unix(100, 0), time.Unix(200, 0)
	s := StatusOf("t", start, nil, end)
	if s.ID != "t" || s.State != TaskStateRunning || !s.StartedAt.Equal(start) || !s.CompletedAt.IsZero() || s.ExitResult != nil {
		t.Fatalf("running status %+v", s)
	}
	res := &ExitResult{ExitCode: 1}
	s = StatusOf("t", start, res, end)
	if s.State != TaskStateExited || s.ExitResult != res || !s.CompletedAt.Equal(end) || !s.StartedAt.Equal(start) {
		t.Fatalf("exited status %+v", s)
	}
}
