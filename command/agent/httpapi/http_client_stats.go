package httpapi

import (
	"net/http"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/client/hoststats"
)

// clientStats answers GET /v1/client/stats[?node_id=]: the host stats of
// the named node's client, or of this agent's own. Another node's request
// is forwarded to its agent. It needs node read, checked by the agent
// that answers (and by the servers when they name another node's agent).
func (s *httpAPI) clientStats(w http.ResponseWriter, r *http.Request) {
	nodeID := r.URL.Query().Get("node_id")
	if s.client == nil || (nodeID != "" && nodeID != s.client.NodeID()) {
		var err error
		switch {
		case nodeID == "":
			err = badRequest("this agent runs no client: name a node with ?node_id=<node ID>")
		case r.Header.Get(forwardedHeader) != "":
			err = notFound("node %s is not this agent's node", nodeID)
		default:
			if ferr := s.forwardToNode(w, r, nodeID); ferr != nil {
				err = notOnNode(nodeID, ferr)
			}
		}
		if err != nil {
			s.writeError(w, r, err)
		}
		return
	}
	if err := s.allowNodeRead(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.localActions()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st, err := c.HostStats()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, hostStatsOut(st))
}

// hostStatsOut turns a sample into Nomad's HostStats. Lists are empty
// rather than null, as Nomad's are.
func hostStatsOut(st *hoststats.Stats) *api.HostStats {
	out := &api.HostStats{
		Memory: &api.HostMemoryStats{Total: st.Memory.Total, Available: st.Memory.Available, Used: st.Memory.Used, Free: st.Memory.Free},
		CPU:    make([]*api.HostCPUStats, 0, len(st.CPU)), DiskStats: make([]*api.HostDiskStats, 0, len(st.Disks)),
		AllocDirStats: diskOut(st.AllocDir), DeviceStats: []*api.DeviceGroupStats{},
		Uptime: st.Uptime, CPUTicksConsumed: st.CPUTicksConsumed, Timestamp: unixNano(st.Timestamp),
	}
	for _, c := range st.CPU {
		out.CPU = append(out.CPU, &api.HostCPUStats{CPU: c.Name, User: c.User, System: c.System, Idle: c.Idle})
	}
	for _, d := range st.Disks {
		out.DiskStats = append(out.DiskStats, diskOut(d))
	}
	return out
}

func diskOut(d hoststats.Disk) *api.HostDiskStats {
	return &api.HostDiskStats{Device: d.Device, Mountpoint: d.Mountpoint, Size: d.Size, Used: d.Used,
		Available: d.Available, UsedPercent: d.UsedPercent, InodesUsedPercent: d.InodesUsedPercent}
}

// unixNano is t in Nomad's nanosecond timestamps, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
