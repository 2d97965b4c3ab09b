//go:build !race

package childproc

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
)

// One allocation far past the heap limit is refused by the kernel before
// it is written, and reported as the memory limit. (A race-enabled child
// has no data limit: see limitData.)
func TestOneAllocationPastTheLimitIsStoppedBeforeItIsWritten(t *testing.T) {
	r := runner("alloc", Limits{Heap: 32 << 20})
	start := time.Now()
	_, err := r.Run(context.Background(), []byte(strconv.Itoa(8<<30)))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitHeap {
		t.Fatalf("want a memory limit error, got %v (%T)", err, err)
	}
	// Writing 8 GiB would take seconds; a refused allocation takes none.
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("stopping it took %v", took)
	}
	if out, err := r.Run(context.Background(), []byte(strconv.Itoa(16<<20))); err != nil || string(out) != "x" {
		t.Fatalf("an allocation within the limit: %q, %v", out, err)
	}
}
