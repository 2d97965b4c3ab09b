package client

import (
	"context"
	"errors"
	"time"

	"github.com/drover-sched/drover/structs"
)

// Retry pacing when no server answers.
const (
	backoffBase = time.Second
	// fenceCheckInterval is how often fenceLoop looks at heartbeat age.
	fenceCheckInterval = time.Second
	// callTimeout bounds one call the client makes for its node
	// (registering, a heartbeat, a batch of alloc reports). Over a link
	// that died silently a call gets no error at all; with a deadline it
	// fails, the client retries, and the connection pool closes the dead
	// connection (rpcx's probe) so the retry dials a new one.
	callTimeout = 30 * time.Second
)

// heartbeatTimeout bounds one heartbeat: an answer later than the TTL the
// servers gave is worth nothing (they will have marked the node), so the
// client gives up then and tries again, within callTimeout.
func heartbeatTimeout(ttl time.Duration) time.Duration {
	return min(max(ttl, 5*time.Second), callTimeout)
}

// heartbeatLoop registers the node, then heartbeats at about half the TTL
// the servers give. A server that no longer knows the node (it was garbage
// collected, or the cluster was rebuilt) answers "not found": the client
// registers again. Failures back off exponentially with jitter.
func (c *Client) heartbeatLoop() {
	registered := false
	failures := 0
	for {
		var err error
		if c.reregister.Swap(false) {
			registered = false
		}
		if !registered {
			err = c.register()
			registered = err == nil
		} else {
			err = c.heartbeat()
			if errors.Is(err, structs.ErrNotFound) {
				c.logger.Warn("servers do not know this node; registering again")
				registered = false
				failures = 0
				continue
			}
		}
		var wait time.Duration
		if err != nil {
			wait = c.jit.backoff(failures, backoffBase, c.cfg.MaxBackoff)
			failures++
			c.logger.Warn("failed to contact servers", "error", err, "retry_in", wait)
		} else {
			failures = 0
			c.mu.Lock()
			ttl := c.heartbeatTTL
			c.mu.Unlock()
			wait = c.jit.heartbeatDelay(ttl)
		}
		select {
		case <-c.ctx.Done():
			return
		case <-c.clock.After(wait):
		}
	}
}

func (c *Client) register() error {
	node := c.Node()
	req := &structs.NodeRegisterRequest{Node: node, WriteRequest: structs.WriteRequest{Region: c.cfg.Region}}
	var resp structs.NodeUpdateResponse
	ctx, cancel := context.WithTimeout(c.ctx, callTimeout)
	defer cancel()
	if err := c.rpc.RPC(ctx, "Node.Register", req, &resp); err != nil {
		return err
	}
	c.logger.Info("node registered", "node_id", node.ID, "heartbeat_ttl", resp.HeartbeatTTL)
	c.heartbeatOK(&resp)
	c.registerOnce.Do(func() { close(c.registeredCh) })
	return nil
}

func (c *Client) heartbeat() error {
	nodeID, secretID := c.identity()
	req := &structs.NodeUpdateStatusRequest{NodeID: nodeID, SecretID: secretID, Status: structs.NodeStatusReady,
		WriteRequest: structs.WriteRequest{Region: c.cfg.Region}}
	var resp structs.NodeUpdateResponse
	c.mu.Lock()
	ttl := c.heartbeatTTL
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, heartbeatTimeout(ttl))
	defer cancel()
	if err := c.rpc.RPC(ctx, "Node.UpdateStatus", req, &resp); err != nil {
		return err
	}
	c.heartbeatOK(&resp)
	return nil
}

// heartbeatOK records a successful heartbeat: the node is ready on the
// servers, so alloc updates they refused may be sent again.
func (c *Client) heartbeatOK(resp *structs.NodeUpdateResponse) {
	ttl := resp.HeartbeatTTL
	if ttl <= 0 {
		ttl = 10 * time.Second
	}
	c.mu.Lock()
	c.lastHeartbeatOK = c.clock.Now()
	c.heartbeatTTL = ttl
	close(c.heartbeatCh)
	c.heartbeatCh = make(chan struct{})
	c.mu.Unlock()
	if c.srv != nil && len(resp.Servers) > 0 {
		addrs := make([]string, 0, len(resp.Servers))
		for _, s := range resp.Servers {
			addrs = append(addrs, s.RPCAdvertiseAddr)
		}
		c.srv.SetServers(addrs)
	}
}

// nextHeartbeat returns a channel closed by the next successful heartbeat.
func (c *Client) nextHeartbeat() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heartbeatCh
}

// fenceLoop implements disconnect.stop_on_client_after: when the servers
// have not acknowledged a heartbeat for that long, the client stops the
// group's allocs itself. The servers will have replaced them by then; a
// partitioned node must not keep running work that now runs elsewhere.
func (c *Client) fenceLoop() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.clock.After(fenceCheckInterval):
		}
		c.checkFence()
	}
}

func (c *Client) checkFence() {
	since := c.clock.Now().Sub(c.LastHeartbeat())
	c.allocMu.RLock()
	defer c.allocMu.RUnlock()
	for id, ar := range c.allocs {
		a := ar.Alloc()
		if a.Job == nil || a.ClientTerminalStatus() {
			continue
		}
		ds := a.DisconnectStrategy()
		if ds == nil || ds.StopOnClientAfter == nil || since <= *ds.StopOnClientAfter {
			continue
		}
		c.mu.Lock()
		done := c.fenced[id]
		c.fenced[id] = true
		c.mu.Unlock()
		if !done {
			c.logger.Warn("stopping alloc: no contact with servers for longer than stop_on_client_after",
				"alloc_id", id, "since_last_heartbeat", since, "stop_on_client_after", *ds.StopOnClientAfter)
			ar.Kill("no contact with servers for longer than stop_on_client_after")
		}
	}
}
