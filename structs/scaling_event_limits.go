package structs

import (
	"encoding/json"
	"fmt"
)

// Bounds on the free-form parts of a scaling event. A group keeps
// JobTrackedScalingEvents events and a job's scale status returns them
// all, so without a bound twenty events of a megabyte made one job's
// status larger than an RPC message may be. Real events (an autoscaler's
// reason, a few meta keys) take a few hundred bytes.
const (
	// MaxScalingEventMessage bounds an event's Message, in bytes.
	MaxScalingEventMessage = 4 << 10
	// MaxScalingEventMeta bounds an event's Meta, in bytes of its JSON
	// encoding (as the HTTP API shows it).
	MaxScalingEventMeta = 8 << 10
)

// CheckScalingEventSize refuses a scaling request whose Message or Meta
// is over its bound, naming the field, its size and the bound.
func CheckScalingEventSize(message string, meta map[string]any) error {
	if n := len(message); n > MaxScalingEventMessage {
		return fmt.Errorf("the scaling event's Message is %d bytes, over the %d bytes it may have; shorten it", n, MaxScalingEventMessage)
	}
	if len(meta) == 0 {
		return nil
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("the scaling event's Meta cannot be encoded as JSON (%v); use strings, numbers, booleans, lists and objects", err)
	}
	if n := len(b); n > MaxScalingEventMeta {
		return fmt.Errorf("the scaling event's Meta is %d bytes as JSON, over the %d bytes it may have; keep fewer or shorter values", n, MaxScalingEventMeta)
	}
	return nil
}
