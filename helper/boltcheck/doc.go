// Package boltcheck checks a bolt database file before a store opens it,
// so that a corrupt file stops the agent with a message naming the file
// and what to do, rather than a raw bolt panic or a SIGBUS naming nothing.
//
// bbolt trusts its file: a torn meta page or a page pointing past the end
// makes it panic, and reading a memory-mapped page beyond a truncated
// file's end raises SIGBUS. Check opens the file read-only under
// debug.SetPanicOnFault (which turns such faults into panics it can
// recover), reads every bucket, key and value on the calling goroutine,
// and reports any failure as an error.
package boltcheck
