package structs

import "fmt"

// ReservedPortCollisionError is AssignPorts refusing a static port that is
// already taken on the node, or asked for twice.
type ReservedPortCollisionError struct {
	Label string
	Port  int
}

func (e *ReservedPortCollisionError) Error() string {
	return fmt.Sprintf("reserved port collision %s=%d", e.Label, e.Port)
}

// DynamicPortsExhaustedError is AssignPorts finding no free port left in
// the node's dynamic port range. The scheduler counts it as its own
// exhaustion dimension, apart from other network refusals: the node is
// full, not misconfigured.
type DynamicPortsExhaustedError struct {
	MinPort, MaxPort int
}

func (e *DynamicPortsExhaustedError) Error() string {
	return fmt.Sprintf("dynamic port selection failed: no free port in %d-%d", e.MinPort, e.MaxPort)
}
