// Package network gives an allocation its own network namespace and
// attaches it through CNI, for a group `network` block whose mode is not
// "host".
//
//   - "bridge": the client's bridge network (Nomad's shape: loopback,
//     bridge with host-local IPAM, firewall, portmap), written by the
//     client from its bridge_network_* settings (bridge.go);
//   - "cni/<name>": the conflist named <name> in cni_config_dir;
//   - "none": a namespace with loopback only.
//
// The plugins are the reference plugins (found in cni_path), driven by
// libcni, so this package holds no netlink or iptables code of its own:
// what a plugin adds, its DEL removes.
//
// # Records and crash safety
//
// Before it creates anything for an alloc, the Manager writes a record
// (record.go) naming the namespace, the conflist and the runtime
// arguments it will use. Teardown runs CNI DEL from the record, removes
// the namespace and only then the record. A client that was killed at any
// point therefore knows, after its restart, everything it may have left
// behind: Reconcile tears down every record whose alloc is no longer
// running, and Restore re-attaches to a running alloc's namespace without
// touching it. A record is the client's own, in its data dir, so two
// clients on one host never clean up each other's namespaces.
//
// # Concurrency
//
// Setup, Restore and Teardown of different allocs run in parallel (the
// plugins lock their shared state, host-local its IP store and portmap
// its chains, themselves); for one alloc the alloc runner calls them one
// at a time from its loop.
package network
