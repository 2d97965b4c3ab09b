package structs

import (
	"crypto/sha256"
	"fmt"

	"github.com/google/uuid"
)

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

// DerivedID makes an ID, in UUID form, from values every server sees
// identically (a raft entry's index and content). It is for the rare object
// an FSM apply must create itself; IDs normally arrive in the entry.
func DerivedID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	b := h.Sum(nil)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
