package structs

// ServerSecret is a credential only the servers of a cluster hold. With
// ACLs on, a server proves to another that a call comes from a server by
// sending it: as the AuthToken of the calls a server makes for itself
// (workers' eval and plan calls forwarded to the leader), and as the
// ServerToken of every request it forwards. The leader makes it once (see
// nomad's server_secret.go) and it is replicated through raft like any
// state, so every server has it; no read endpoint and no answer carries
// it. Unlike ACL token secrets it is stored in clear: servers must send
// it, and whoever can read a server's raft data has a server's power
// anyway.
type ServerSecret struct {
	Secret      string
	CreateIndex uint64
	ModifyIndex uint64
}

// ServerSecretRequest is the raft entry that stores the server secret.
// The FSM stores it only if the cluster has none yet, so a stale leader
// can never replace the secret the other servers already use.
type ServerSecretRequest struct {
	Secret string
}
