// Package dirperm creates the agent's own directories with the mode they
// must have, and tightens them when they already exist.
//
// MkdirAll alone is not enough for the directories that hold secrets (the
// client's state DB and node secret, the server's raft log): it leaves an
// existing directory as it is, so a data dir made by an older version, by
// an operator's mkdir, or under a loose umask keeps whatever mode it had.
// Ensure sets the mode every time the agent starts.
package dirperm
