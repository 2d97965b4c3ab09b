package scheduler

import (
	"fmt"
	"hash/fnv"
	"math/rand"
)

// idSalt separates the ID stream from the placement stream: both come from
// the same seed, but adding a random choice to placement (another shuffle)
// must not change every ID a replayed eval makes.
const idSalt = 0x5eed1d5

// seedFor returns the seed for an evaluation: the configured one, or one
// derived from the eval ID so the same eval always replays the same way.
func seedFor(configured int64, evalID string) int64 {
	if configured != 0 {
		return configured
	}
	h := fnv.New64a()
	h.Write([]byte(evalID))
	return int64(h.Sum64())
}

// idGenerator makes UUID-shaped (version 4) IDs from a seeded source, for
// the allocations and evaluations a scheduler creates.
type idGenerator struct{ rng *rand.Rand }

func newIDGenerator(seed int64) *idGenerator {
	return &idGenerator{rng: rand.New(rand.NewSource(seed ^ idSalt))}
}

// next returns a new ID.
func (g *idGenerator) next() string {
	hi, lo := g.rng.Uint64(), g.rng.Uint64()
	hi = hi&^(0xf<<12) | 0x4<<12 // version 4
	lo = lo&^(0x3<<62) | 0x2<<62 // RFC 4122 variant
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", hi>>32, (hi>>16)&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff)
}
