package scheduler

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand"
)

// idSalt separates the ID stream from the placement stream: both come from
// the same seed, but adding a random choice to placement (another shuffle)
// must not change every ID a replayed eval makes.
const idSalt = 0x5eed1d5

// seedFor returns the seed for an evaluation: the configured one, or one
// derived from the eval ID and the index of the snapshot it is scheduled
// on. The same eval on the same snapshot replays the same way; the same
// eval scheduled again later (a blocked eval reblocked and unblocked, an
// eval nacked after its plan committed and delivered again) gets another
// seed, since its first run's writes moved the index. Seeded by the eval
// ID alone, the second run made the first run's IDs again: its new allocs,
// follow-up evals and deployment took the IDs of ones already stored, and
// the plan overwrote them.
func seedFor(configured int64, evalID string, snapshotIndex uint64) int64 {
	if configured != 0 {
		return configured
	}
	h := fnv.New64a()
	h.Write([]byte(evalID))
	var idx [8]byte
	binary.BigEndian.PutUint64(idx[:], snapshotIndex)
	h.Write(idx[:])
	return int64(h.Sum64())
}

// idGenerator makes UUID-shaped (version 4) IDs from a seeded source, for
// the allocations, evaluations and deployments a scheduler creates. taken,
// when set, says whether the state already holds an object with an ID,
// and next draws again for one that it does: an ID the scheduler makes is
// always new, whatever the seed.
type idGenerator struct {
	rng   *rand.Rand
	taken func(id string) bool
}

func newIDGenerator(seed int64, taken func(id string) bool) *idGenerator {
	return &idGenerator{rng: rand.New(rand.NewSource(seed ^ idSalt)), taken: taken}
}

// next returns a new ID.
func (g *idGenerator) next() string {
	// With a derived seed a draw is taken only in the rarest case; with a
	// configured one every eval replays one stream, and this walks past
	// what earlier evals of it stored (the state is finite, the stream is
	// not, so the walk ends).
	id := g.draw()
	for g.taken != nil && g.taken(id) {
		id = g.draw()
	}
	return id
}

func (g *idGenerator) draw() string {
	hi, lo := g.rng.Uint64(), g.rng.Uint64()
	hi = hi&^(0xf<<12) | 0x4<<12 // version 4
	lo = lo&^(0x3<<62) | 0x2<<62 // RFC 4122 variant
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", hi>>32, (hi>>16)&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff)
}
