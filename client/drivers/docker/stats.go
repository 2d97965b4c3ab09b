package docker

import (
	"encoding/json"
	"fmt"

	"github.com/docker/docker/api/types/container"

	"github.com/drover-sched/drover/client/drivers"
)

// TaskStats samples the container's cgroup through the daemon: resident
// memory (rss on cgroup v1, anon on v2, else usage less page cache), CPU
// time and the number of processes.
func (d *Driver) TaskStats(id string) (*drivers.TaskResourceUsage, error) {
	t, err := d.lookup(id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := d.call()
	defer cancel()
	r, err := d.docker.ContainerStatsOneShot(ctx, t.containerID)
	if err != nil {
		return nil, fmt.Errorf("docker: stats of container %s: %w", shortID(t.containerID), err)
	}
	defer r.Body.Close()
	var s container.StatsResponse
	if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
		return nil, fmt.Errorf("docker: decoding stats of container %s: %w", shortID(t.containerID), err)
	}
	u := usageOf(&s)
	u.Timestamp = d.clock.Now()
	return u, nil
}

func usageOf(s *container.StatsResponse) *drivers.TaskResourceUsage {
	u := &drivers.TaskResourceUsage{
		CPUTotalSeconds: float64(s.CPUStats.CPUUsage.TotalUsage) / 1e9,
		Pids:            int(s.PidsStats.Current),
	}
	m := s.MemoryStats
	switch {
	case m.Stats["rss"] > 0:
		u.MemoryRSS = m.Stats["rss"]
	case m.Stats["anon"] > 0:
		u.MemoryRSS = m.Stats["anon"]
	case m.Usage > m.Stats["cache"]:
		u.MemoryRSS = m.Usage - m.Stats["cache"]
	}
	return u
}
