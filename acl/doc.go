// Package acl is Drover's access control language and its evaluation, in
// Nomad's model: a policy is a set of rules written in HCL (or HCL's JSON
// form), a token carries the names of its policies, and the policies of a
// token compile into one *ACL that answers "may this caller do that?".
//
// # Policies
//
// Parse reads one policy's rules:
//
//	namespace "default" {
//	  policy       = "write"           # deny, read, write or scale
//	  capabilities = ["alloc-node-exec"]
//	}
//	namespace "prod-*" { policy = "read" }
//	node     { policy = "read" }       # deny, read or write
//	agent    { policy = "read" }
//	operator { policy = "write" }
//	quota    { policy = "read" }
//	plugin   { policy = "list" }       # deny, list, read or write
//	host_volume "ssd-*" { policy = "write" }
//	node_pool   "gpu"   { policy = "read" }
//
// A `policy` is a shorthand that expands to Nomad's documented set of
// capabilities (see capabilities.go); capabilities listed beside it are
// added. Every value is checked when a policy is written, and an error names
// the line, the block, the bad value and what is allowed. The rules are
// bounded (MaxRulesSize bytes, MaxBlocks blocks, MaxNestingDepth) before
// they are parsed, so a policy cannot make a server hold or recurse
// without limit.
//
// # Merging
//
// NewACL compiles any number of policies into one ACL with Nomad's rules:
//
//   - Rules for the same name (the same namespace, say) are merged: the
//     union of their capabilities, unless any of them denies, and then the
//     name is denied whatever the others grant. Deny always wins.
//   - node, agent, operator, quota and plugin rules take the most
//     privileged policy among them, except that deny wins there too.
//   - A namespace is matched by its exact rule if there is one; otherwise by
//     the closest matching glob, the one that leaves the fewest characters
//     to its `*`s (ties go to the lexically first glob, so the answer never
//     depends on the order policies were given in).
//
// The result depends only on the set of policies, never on their order;
// a property test holds the package to that.
//
// # Evaluation
//
// The enforcement layer calls the Allow* methods. A nil *ACL means ACLs are
// disabled and allows everything, so callers need no special case; the
// management ACL also allows everything. An ACL is immutable once built and
// safe for concurrent use, which is what lets servers cache it.
//
// This package imports no other Drover package: the servers, the clients
// and the agent all use it.
package acl
