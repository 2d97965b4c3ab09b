// Package testutil holds helpers shared by the client's tests. It has no
// state and starts no goroutines.
package testutil
