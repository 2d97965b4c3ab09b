//go:build race

package childproc

// raceEnabled is true in a binary built with -race.
const raceEnabled = true
