package nodesim

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	randv2 "math/rand/v2"
	"sync"
	"time"

	"github.com/drover-sched/drover/client/allocsync"
	"github.com/drover-sched/drover/structs"
)

// node is one simulated client. See the package doc for who owns what.
type node struct {
	sim    *Sim
	sh     *shard
	idx    int
	id     string
	secret string
	tmpl   *structs.Node
	// notices receives the alloc notices the servers push for the node
	// (watch.go).
	notices *allocsync.Mailbox

	mu           sync.Mutex
	rnd          *randv2.Rand // small (PCG): a math/rand source is 4.9 KB a node
	registered   bool
	ttl          time.Duration
	failures     int
	hbTimer      *time.Timer
	hbGen        int // bumped by cutOff and reconnect: older timers do nothing
	down         bool
	resumeCh     chan struct{} // closed when an outage ends
	watchCancel  context.CancelFunc
	registeredCh chan struct{}
	regOnce      sync.Once
	allocs       map[string]*simAlloc
	pending      map[string]*structs.Allocation
	flushTimer   *time.Timer
	held         bool // a batch was refused: resend after the next heartbeat
}

func newNode(s *Sim, i int, sh *shard, ids *rand.Rand) (*node, error) {
	cfg := s.cfg
	meta := make(map[string]string, len(cfg.Meta))
	for k, v := range cfg.Meta {
		val, err := expandMeta(v, i)
		if err != nil {
			return nil, fmt.Errorf("nodesim: meta %q: %w", k, err)
		}
		meta[k] = val
	}
	id, secret := uuid(ids), uuid(ids)
	name := fmt.Sprintf("%s-%d", cfg.NamePrefix, i)
	drivers := map[string]*structs.DriverInfo{}
	attrs := map[string]string{
		"kernel.name": "linux", "kernel.arch": "x86_64", "os.name": "nodesim", "cpu.arch": "amd64",
		"cpu.numcores": "4", "cpu.totalcompute": fmt.Sprint(cfg.CPU), "memory.totalbytes": fmt.Sprint(cfg.MemoryMB << 20),
		"unique.hostname": name, "unique.network.ip-address": "127.0.0.1",
		"nomad.region": cfg.Region, "nomad.version": "nodesim",
	}
	for _, d := range []string{"mock_driver", "mock"} {
		drivers[d] = &structs.DriverInfo{Detected: true, Healthy: true, HealthDescription: "Healthy", Attributes: map[string]string{}}
		attrs["driver."+d] = "1"
	}
	tmpl := &structs.Node{
		ID: id, SecretID: secret, Name: name, Datacenter: cfg.Datacenters[i%len(cfg.Datacenters)],
		NodeClass: cfg.NodeClass, NodePool: cfg.NodePool, Attributes: structs.NewAttributes(attrs), Meta: meta, Drivers: drivers,
		NodeResources: &structs.NodeResources{
			Cpu:      structs.NodeCpuResources{CpuShares: cfg.CPU, TotalCpuCores: 4},
			Memory:   structs.NodeMemoryResources{MemoryMB: cfg.MemoryMB},
			Disk:     structs.NodeDiskResources{DiskMB: cfg.DiskMB},
			Networks: structs.Networks{{Mode: "host", Device: "lo", IP: "127.0.0.1", CIDR: "127.0.0.1/32", MBits: 1000}},
			NodeNetworks: []*structs.NodeNetworkResource{{Mode: "host", Device: "lo", Speed: 1000,
				Addresses: []structs.NodeNetworkAddress{{Family: "ipv4", Alias: "default", Address: "127.0.0.1"}}}},
			MinDynamicPort: 20000, MaxDynamicPort: 32000,
		},
		ReservedResources:     &structs.NodeReservedResources{},
		Status:                structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible,
	}
	tmpl.Canonicalize()
	return &node{sim: s, sh: sh, idx: i, id: id, secret: secret, tmpl: tmpl, notices: sh.notices.Add(id),
		rnd: randv2.New(randv2.NewPCG(uint64(cfg.Seed), uint64(i))), registeredCh: make(chan struct{}),
		allocs: map[string]*simAlloc{}, pending: map[string]*structs.Allocation{}}, nil
}

// uuid formats 16 random bytes as a version-4 UUID.
func uuid(r *rand.Rand) string {
	var b [16]byte
	r.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (n *node) start(delay time.Duration) {
	n.mu.Lock()
	n.schedule(delay)
	n.mu.Unlock()
	s := n.sim
	s.lifeMu.RLock()
	defer s.lifeMu.RUnlock()
	if s.ctx.Err() != nil {
		return
	}
	s.wg.Add(1)
	go n.watch()
}

func (n *node) isRegistered() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.registered
}

// schedule arms the heartbeat timer. Caller holds n.mu.
func (n *node) schedule(d time.Duration) {
	gen := n.hbGen
	n.hbTimer = time.AfterFunc(d, func() { n.beat(gen) })
}

func (n *node) stopTimers() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hbGen++
	if n.hbTimer != nil {
		n.hbTimer.Stop()
	}
	if n.flushTimer != nil {
		n.flushTimer.Stop()
	}
	for _, a := range n.allocs {
		a.stopTimers()
	}
}

// beat registers or heartbeats once, then arms the next one: at about
// half the TTL after a success, after an exponential backoff after a
// failure, at once when the servers no longer know the node.
func (n *node) beat(gen int) {
	s := n.sim
	if s.ctx.Err() != nil {
		return
	}
	n.mu.Lock()
	if gen != n.hbGen || n.down {
		n.mu.Unlock()
		return
	}
	registered := n.registered
	n.mu.Unlock()

	var resp structs.NodeUpdateResponse
	var err error
	if !registered {
		node := n.tmpl.Copy()
		req := &structs.NodeRegisterRequest{Node: node, WriteRequest: structs.WriteRequest{Region: s.cfg.Region}}
		err = s.call(s.ctx, n.sh, callTimeout, "Node.Register", req, &resp)
		if err == nil {
			s.stats.Registrations.Add(1)
		}
	} else {
		n.mu.Lock()
		ttl := n.ttl
		n.mu.Unlock()
		req := &structs.NodeUpdateStatusRequest{NodeID: n.id, SecretID: n.secret, Status: structs.NodeStatusReady,
			WriteRequest: structs.WriteRequest{Region: s.cfg.Region}}
		err = s.call(s.ctx, n.sh, min(max(ttl, 5*time.Second), callTimeout), "Node.UpdateStatus", req, &resp)
		if err == nil {
			s.stats.Heartbeats.Add(1)
		}
	}

	n.mu.Lock()
	if gen != n.hbGen || n.down || s.ctx.Err() != nil {
		n.mu.Unlock()
		return
	}
	var wait time.Duration
	switch {
	case err == nil:
		n.failures = 0
		n.registered = true
		n.ttl = resp.HeartbeatTTL
		if n.ttl <= 0 {
			n.ttl = 10 * time.Second
		}
		half := n.ttl / 2
		wait = half - time.Duration(n.rnd.Int64N(int64(n.ttl/10)+1))
	case registered && errors.Is(err, structs.ErrNotFound):
		n.registered = false
		n.failures = 0
	default:
		s.stats.HeartbeatFailures.Add(1)
		wait = backoff(n.rnd, n.failures, backoffBase, s.cfg.MaxBackoff)
		n.failures++
		s.log.Warn("nodesim: failed to contact servers", "node", n.tmpl.Name, "error", err, "retry_in", wait)
	}
	n.schedule(wait)
	resend := err == nil && n.held
	n.held = n.held && !resend
	n.mu.Unlock()
	if err == nil {
		n.regOnce.Do(func() { close(n.registeredCh) })
		// As the real client: adopt the servers the heartbeat names.
		if len(resp.Servers) > 0 {
			addrs := make([]string, 0, len(resp.Servers))
			for _, sv := range resp.Servers {
				addrs = append(addrs, sv.RPCAdvertiseAddr)
			}
			n.sh.rpc.SetServers(addrs)
		}
	}
	if resend {
		n.flushSoon(0)
	}
}

// backoff is the real client's: exponential from base, capped at max,
// with equal jitter (between half and all of it).
func backoff(r *randv2.Rand, attempt int, base, max time.Duration) time.Duration {
	d := base
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	half := d / 2
	return half + time.Duration(r.Int64N(int64(half)+1))
}

// cutOff starts an outage: no call of any kind until it ends. With a
// positive d the outage ends by itself after d if back is true.
func (n *node) cutOff(d time.Duration, back bool) {
	n.mu.Lock()
	if n.down {
		n.mu.Unlock()
		return
	}
	n.down = true
	n.hbGen++
	if n.hbTimer != nil {
		n.hbTimer.Stop()
	}
	n.resumeCh = make(chan struct{})
	if n.watchCancel != nil {
		n.watchCancel()
	}
	n.mu.Unlock()
	n.sim.stats.NodesFaulted.Add(1)
	if d > 0 && back {
		time.AfterFunc(d, n.reconnect)
	}
}

// reconnect ends an outage: heartbeat first, then the held reports and
// the blocking query, in the order the servers require.
func (n *node) reconnect() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.down || n.sim.ctx.Err() != nil {
		return
	}
	n.down = false
	n.hbGen++
	n.held = n.held || len(n.pending) > 0
	if n.flushTimer != nil {
		n.flushTimer.Stop()
		n.flushTimer = nil
	}
	close(n.resumeCh)
	n.schedule(0)
	n.sim.stats.NodesReturned.Add(1)
}
