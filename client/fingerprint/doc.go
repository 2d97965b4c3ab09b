// Package fingerprint describes the machine a client runs on as a
// structs.Node: CPU, memory, disk, host and kernel, network address,
// drivers, plus the operator's settings (class, pool, meta, reservations)
// and the node's persistent identity.
//
// Each fingerprinter is a function of what it reads (a /proc file, a
// statfs, the interface list) so it can be tested against fixtures; the
// roots of /proc, /sys and /etc are variables for that reason. Nothing here
// has goroutines or state; the client calls Fingerprint once at start.
package fingerprint
