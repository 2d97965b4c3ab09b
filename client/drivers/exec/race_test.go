//go:build race

package exec

// raceEnabled: the test binary, and so every task's init, runs under the
// race detector, whose shadow memory makes the init some 15 MB bigger.
const raceEnabled = true
