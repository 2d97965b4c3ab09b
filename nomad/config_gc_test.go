package nomad

import (
	"strings"
	"testing"
	"time"
)

// A GC interval that is not positive would make the leader's loop spin or
// never run; it is refused by name, with an example of a right value.
func TestConfigRefusesAGCIntervalThatIsNotPositive(t *testing.T) {
	c := DefaultConfig()
	c.DevMode = true
	if err := c.Validate(); err != nil {
		t.Fatalf("the defaults must be valid: %v", err)
	}
	c.NodeGCInterval = -time.Second
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "node_gc_interval") || !strings.Contains(err.Error(), `"5m"`) {
		t.Fatalf("got %v; want an error naming node_gc_interval with an example", err)
	}
}
