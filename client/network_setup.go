package client

import (
	"context"
	"os"
	"path/filepath"

	"github.com/drover-sched/drover/client/network"
	"github.com/drover-sched/drover/structs"
)

// setupNetwork makes the manager of group networks (bridge, none,
// cni/*). Namespaces and CNI plugins need root: a client that is not
// root has none, and a group that asks for one fails with that reason.
// The bridge conflist is written next to the records, so an operator can
// read what the client attaches allocs with.
func (c *Client) setupNetwork() {
	if os.Geteuid() != 0 {
		c.logger.Info("not root: group network modes other than host are unavailable")
		return
	}
	cfg := c.cfg.Network
	cfg.StateDir = filepath.Join(c.cfg.StateDir(), "network")
	if s, ok := c.drivers["docker"].(network.Sandboxes); ok {
		cfg.Sandboxes = s
	}
	m, err := network.NewManager(cfg, c.logger)
	if err != nil {
		c.logger.Error("group networks are unavailable", "error", err)
		return
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err == nil {
		path := filepath.Join(cfg.StateDir, m.Config().BridgeName+".conflist")
		if err := os.WriteFile(path, m.BridgeConfList(), 0o600); err != nil {
			c.logger.Warn("could not write the bridge network's conflist", "error", err)
		}
	}
	c.network = m
}

// advertiseNetworkModes lists the group network modes this client can
// give (bridge, none, cni/<name>) among the node's networks, as Nomad's
// fingerprint does, so the scheduler places such groups only here.
func (c *Client) advertiseNetworkModes(node *structs.Node) {
	if c.network == nil || node.NodeResources == nil {
		return
	}
	for _, mode := range c.network.Modes() {
		node.NodeResources.Networks = append(node.NodeResources.Networks, &structs.NetworkResource{Mode: mode})
	}
}

// reconcileNetworks tears down the networks of allocs this client no
// longer holds (stopped and collected while it was down, or left by a
// crash between the alloc's removal and its network's).
func (c *Client) reconcileNetworks(allocs []*structs.Allocation) {
	if c.network == nil {
		return
	}
	known := make(map[string]bool, len(allocs))
	for _, a := range allocs {
		known[a.ID] = true
	}
	if err := c.network.Reconcile(context.Background(), func(id string) bool { return known[id] }); err != nil {
		c.logger.Error("could not tear down the networks of gone allocs", "error", err)
	}
}
