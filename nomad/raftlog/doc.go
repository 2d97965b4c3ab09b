// Package raftlog owns the format of a Drover raft log entry: what the
// bytes of a command entry are, how they are made and read back, how large
// one may be, and which entries a server refuses from the network before
// raft stores them.
//
// # Format
//
// A command entry is one message-type byte (structs.MessageType) followed
// by the request, msgpack-encoded with the codec RPC uses
// (rpcx.MsgpackHandle). A type with structs.IgnoreUnknownTypeFlag set may
// be skipped by a server that does not know it. Entries are on disk for
// good, so the bytes never change: testdata/entries.golden records one
// entry of each message type, and a test fails if any of them encodes
// differently.
//
// The message types stay in structs, where the server names them at every
// raft write; this package owns only their bytes.
//
// # Promises
//
//   - Encode never puts the caller's ACL token in the log.
//   - Decode reads a body with the RPC codec's bounds: every length backed
//     by bytes present, nesting bounded, and what the value decodes into
//     within a multiple of its size (rpcx's decode-cost check), so a
//     hostile entry cannot make the process hold what it claims.
//   - Vet refuses only entries raft itself would panic on. It never
//     refuses a command entry, whatever its type byte: a follower that
//     refused its leader's entry would stall for good, and during a
//     rolling upgrade a leader writes types the followers do not know yet.
//     Whether an entry can be applied is the FSM's decision, the same one
//     on every server.
//
// # What it needs
//
// Nothing of the server: structs for the message types, helper/rpcx for
// the codec, and hashicorp/raft for its Log and configuration format.
package raftlog
