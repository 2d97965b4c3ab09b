package servicereg

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sort"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// Defaults of Config.
const (
	DefaultResyncInterval = 5 * time.Minute
	DefaultRetryMin       = time.Second
	DefaultRetryMax       = 30 * time.Second
)

// Config is what a Syncer needs of its client.
type Config struct {
	RPC config.RPCer
	// Allocs returns every alloc the client runs or keeps, as the client
	// sees it now.
	Allocs func() []*structs.Allocation
	// Node returns the node as registered (ID, secret, address).
	Node   func() *structs.Node
	Region string
	Clock  clock.Clock
	Logger hclog.Logger
	// Seed seeds the retry jitter.
	Seed int64
	// ResyncInterval is how often every registration is sent again.
	ResyncInterval time.Duration
	// RetryMin and RetryMax bound the backoff after a failed pass.
	RetryMin, RetryMax time.Duration
}

// Syncer keeps the servers' registrations of this node's allocs equal to
// the ones they should have. See the package doc.
type Syncer struct {
	cfg  Config
	kick chan struct{}
	rnd  *rand.Rand

	// known is what the servers are believed to hold, by ID: a
	// registration, or nil for one they acknowledged deleting. An ID
	// missing from it is unknown. Only Run touches it.
	known map[string]*structs.ServiceRegistration
}

// New returns a Syncer; Run starts it.
func New(cfg Config) *Syncer {
	if cfg.ResyncInterval <= 0 {
		cfg.ResyncInterval = DefaultResyncInterval
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = DefaultRetryMin
	}
	if cfg.RetryMax < cfg.RetryMin {
		cfg.RetryMax = max(DefaultRetryMax, cfg.RetryMin)
	}
	cfg.Clock = clock.OrReal(cfg.Clock)
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Syncer{
		cfg: cfg, kick: make(chan struct{}, 1), rnd: rand.New(rand.NewSource(cfg.Seed)),
		known: map[string]*structs.ServiceRegistration{},
	}
}

// Kick asks for a pass soon. It never blocks.
func (s *Syncer) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run syncs until ctx ends.
func (s *Syncer) Run(ctx context.Context) {
	log := s.cfg.Logger.Named("service_registration")
	failures := 0
	resync := s.cfg.Clock.After(s.cfg.ResyncInterval)
	// retry is the pending retry after a failed pass, if any. A kick
	// that fails again keeps it rather than starting another, so the
	// backoff holds however often allocs change.
	var retry <-chan time.Time
	for {
		if err := s.Sync(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			if retry == nil {
				d := s.backoff(failures)
				failures++
				log.Warn("service registration sync failed; retrying", "error", err, "retry_in", d)
				retry = s.cfg.Clock.After(d)
			}
		} else {
			failures, retry = 0, nil
		}
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-retry:
			retry = nil
		case <-resync:
			s.known = map[string]*structs.ServiceRegistration{}
			resync = s.cfg.Clock.After(s.cfg.ResyncInterval)
		}
	}
}

func (s *Syncer) backoff(attempt int) time.Duration {
	d := s.cfg.RetryMin
	for i := 0; i < attempt && d < s.cfg.RetryMax; i++ {
		d *= 2
	}
	d = min(d, s.cfg.RetryMax)
	return d/2 + time.Duration(s.rnd.Int63n(int64(d/2)+1))
}

// Sync makes one pass: it upserts the wanted registrations the servers
// are not known to hold and deletes the unwanted ones they may hold. It
// is called only from Run's goroutine (and by tests, instead of Run).
func (s *Syncer) Sync(ctx context.Context) error {
	node := s.cfg.Node()
	wanted := map[string]*structs.ServiceRegistration{}
	possible := map[string]bool{}
	for _, a := range s.cfg.Allocs() {
		w, all := Registrations(a, node)
		for _, id := range all {
			possible[id] = true
		}
		for _, r := range w {
			wanted[r.ID] = r
		}
	}
	var upserts []*structs.ServiceRegistration
	for _, id := range slices.Sorted(maps.Keys(wanted)) {
		if r := wanted[id]; !r.Equal(s.known[id]) {
			upserts = append(upserts, r)
		}
	}
	var deletes []string
	for id := range possible {
		if k, seen := s.known[id]; wanted[id] == nil && (!seen || k != nil) {
			deletes = append(deletes, id)
		}
	}
	for id, k := range s.known {
		if !possible[id] && k != nil {
			deletes = append(deletes, id) // its alloc is forgotten, its registration may not be
		}
	}
	sort.Strings(deletes)
	for start := 0; start < len(upserts); start += structs.MaxServiceRegistrationsPerRequest {
		batch := upserts[start:min(start+structs.MaxServiceRegistrationsPerRequest, len(upserts))]
		req := &structs.ServiceRegistrationUpsertRequest{Services: batch, NodeID: node.ID, SecretID: node.SecretID,
			WriteRequest: structs.WriteRequest{Region: s.cfg.Region}}
		if err := s.cfg.RPC.RPC(ctx, "ServiceRegistration.Upsert", req, &structs.GenericResponse{}); err != nil {
			return fmt.Errorf("registering %d services: %w", len(batch), err)
		}
		for _, r := range batch {
			s.known[r.ID] = r
		}
	}
	for start := 0; start < len(deletes); start += structs.MaxServiceRegistrationsPerRequest {
		batch := deletes[start:min(start+structs.MaxServiceRegistrationsPerRequest, len(deletes))]
		req := &structs.ServiceRegistrationDeleteRequest{IDs: batch, NodeID: node.ID, SecretID: node.SecretID,
			WriteRequest: structs.WriteRequest{Region: s.cfg.Region}}
		if err := s.cfg.RPC.RPC(ctx, "ServiceRegistration.Deregister", req, &structs.GenericResponse{}); err != nil {
			return fmt.Errorf("deregistering %d services: %w", len(batch), err)
		}
		for _, id := range batch {
			s.known[id] = nil
		}
	}
	// Forget acknowledged deletes of allocs the client forgot.
	for id, k := range s.known {
		if k == nil && !possible[id] {
			delete(s.known, id)
		}
	}
	return nil
}
