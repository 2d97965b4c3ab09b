package allocrunner

import (
	"context"
	"fmt"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/network"
	"github.com/drover-sched/drover/structs"
)

// Networker gives an alloc its own network namespace (client/network's
// Manager). The runner calls it from its loop only: Setup before the
// first task starts, Restore instead for a restored runner, Teardown once
// every task is dead or when the alloc is destroyed.
type Networker interface {
	Setup(ctx context.Context, req network.Request) (*network.Status, error)
	Restore(allocID string) (*network.Status, error)
	Teardown(ctx context.Context, allocID string) error
}

// groupNetworkMode is the mode of the group's network block ("host"
// without one).
func groupNetworkMode(tg *structs.TaskGroup) string {
	if len(tg.Networks) == 0 || tg.Networks[0].Mode == "" {
		return "host"
	}
	return tg.Networks[0].Mode
}

// setupNetwork is the alloc-level step before any task starts: the
// alloc's namespace, new or (restored) the one a previous client process
// made. A group in host mode has nothing to set up. The alloc's address
// in its namespace is reported to the servers (NetworkStatus), as Nomad
// does, for `alloc status` and service addresses.
func (ar *AllocRunner) setupNetwork(alloc *structs.Allocation, tg *structs.TaskGroup) (drivers.AllocNetwork, error) {
	mode := groupNetworkMode(tg)
	if !network.NeedsNamespace(mode) {
		return drivers.AllocNetwork{}, nil
	}
	if ar.cfg.Network == nil {
		return drivers.AllocNetwork{}, fmt.Errorf("network mode %q: this client has no CNI networking (it runs only as root on Linux)", mode)
	}
	var st *network.Status
	var err error
	if ar.cfg.Restore {
		st, err = ar.cfg.Network.Restore(alloc.ID)
	} else {
		req := network.Request{AllocID: alloc.ID, Mode: mode, DNS: tg.Networks[0].DNS}
		for _, t := range tg.Tasks {
			// Docker can only join a container's network: its pause
			// container holds the alloc's (client/drivers/docker).
			req.Sandbox = req.Sandbox || t.Driver == "docker"
		}
		if alloc.AllocatedResources != nil {
			req.Ports = alloc.AllocatedResources.Shared.GroupPorts()
		}
		start := ar.clock.Now()
		st, err = ar.cfg.Network.Setup(context.Background(), req)
		ar.logger.Debug("alloc network set up", "mode", mode, "took", ar.clock.Now().Sub(start), "error", err)
	}
	if err != nil {
		return drivers.AllocNetwork{}, err
	}
	if st.Address != "" {
		ar.st.netStatus = &structs.AllocNetworkStatus{InterfaceName: st.IfName, Address: st.Address, DNS: tg.Networks[0].DNS}
	}
	return drivers.AllocNetwork{NetNSPath: st.NetNSPath, ResolvConfPath: st.ResolvConf, DNS: tg.Networks[0].DNS}, nil
}

// teardownNetwork removes the alloc's namespace, port mappings and
// firewall rules. It runs once every task is dead (the alloc stopped or
// failed) and again, harmlessly, when the alloc is destroyed; a client
// shutting down leaves the namespace to the next one.
func (ar *AllocRunner) teardownNetwork() error {
	if ar.cfg.Network == nil || ar.st.netDown {
		return nil
	}
	start := ar.clock.Now()
	if err := ar.cfg.Network.Teardown(context.Background(), ar.ID()); err != nil {
		ar.logger.Error("failed to tear down the alloc's network", "error", err)
		return fmt.Errorf("tear down the alloc's network: %w", err)
	}
	ar.logger.Debug("alloc network torn down", "took", ar.clock.Now().Sub(start))
	ar.st.netDown = true
	return nil
}
