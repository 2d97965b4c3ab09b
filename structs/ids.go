package structs

import "github.com/google/uuid"

// GenerateUUID returns a random identifier. It must never be called inside a
// raft FSM apply or in the scheduler's decision path without a seeded source:
// IDs are made by the leader (or the scheduler's seeded generator) and arrive
// in the log entry.
func GenerateUUID() string { return uuid.NewString() }

// ShortID returns the first eight characters of an ID, the way the CLI shows it.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
