// Package fingerprint describes the machine a client runs on as a
// structs.Node: CPU, memory, disk, host and kernel, network address,
// drivers, plus the operator's settings (class, pool, meta, reservations)
// and the node's persistent identity.
//
// The description is a set of small Fingerprinters, one per part of the
// machine (cpu.go, memdisk.go, host.go, network.go, drivers.go), each
// adding its attributes and resources to the node being built. Each reads
// the machine through what it is given (the roots of /proc, /sys and
// /etc, the uname, hostname, statfs and interface-list calls), never
// through package state, so each can be tested against a fake root, the
// way client/hoststats is. hostMachine gives them this host. Nothing here
// has goroutines or state; the client calls Fingerprint once at start.
package fingerprint
