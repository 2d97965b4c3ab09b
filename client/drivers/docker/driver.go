package docker

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/client"
	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// Name is the driver name used in jobspecs.
const Name = "docker"

// Labels Drover puts on every container it creates. The reaper finds
// Drover's containers by LabelAllocID.
const (
	LabelAllocID  = "io.drover.alloc_id"
	LabelTaskName = "io.drover.task_name"
	LabelTaskID   = "io.drover.task_id"
	LabelJobName  = "io.drover.job_name"
	LabelGroup    = "io.drover.task_group"
	// LabelNodeID scopes the reaper to this node's containers: clients
	// that share a daemon (several agents on one machine) never reap each
	// other's.
	LabelNodeID = "io.drover.node_id"
)

// daemonTimeout bounds the daemon calls that should answer at once
// (inspect, kill, remove), so that a hung daemon fails a call instead of
// blocking the task runner forever.
const daemonTimeout = 30 * time.Second

// Options configure the driver.
type Options struct {
	Logger hclog.Logger
	Clock  clock.Clock
	// Config is the agent's plugin "docker" config.
	Config PluginConfig
	// AllocLive reports whether an alloc still runs on this node; the
	// reaper keeps the containers of live allocs. Nil means the reaper
	// removes any Drover container the driver does not track.
	AllocLive func(allocID string) bool
	// NodeID returns the client's node ID ("" until it is known). The
	// reaper only runs once it is known, and only on containers labelled
	// with it.
	NodeID func() string
	// NodeCPU returns the node's total CPU in MHz and its core count, for
	// cpu_hard_limit; nil refuses cpu_hard_limit.
	NodeCPU func() (totalMHz int64, cores int)

	// reapOnly narrows the reaper to containers with this extra label
	// ("key=value"), so that the package's tests never reap the
	// containers of a real client on the same daemon.
	reapOnly string
}

// Driver runs each task attempt as one container. See doc.go.
type Driver struct {
	opts   Options
	logger hclog.Logger
	clock  clock.Clock
	docker *client.Client
	// clientErr is why no client could be made (a bad endpoint).
	clientErr error

	images *imageRefs

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// healthNotice tells the client's health loop that a daemon call
	// failed, so that it fingerprints again at once (HealthMayHaveChanged).
	healthNotice chan struct{}

	mu    sync.Mutex
	tasks map[string]*task
}

var (
	_ drivers.Driver             = (*Driver)(nil)
	_ drivers.Signaller          = (*Driver)(nil)
	_ drivers.CapabilitiesDriver = (*Driver)(nil)
	_ drivers.HealthNotifier     = (*Driver)(nil)
)

// New returns the docker driver and starts its reaper (when the plugin
// config enables it). It does not contact the daemon: Fingerprint does.
func New(opts Options) *Driver {
	if opts.NodeID == nil {
		opts.NodeID = func() string { return "" }
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	d := &Driver{opts: opts, logger: opts.Logger.Named(Name), clock: clock.OrReal(opts.Clock), tasks: map[string]*task{}, healthNotice: make(chan struct{}, 1)}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	clientOpts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
	if opts.Config.Endpoint != "" {
		clientOpts = append(clientOpts, client.WithHost(opts.Config.Endpoint))
	}
	d.docker, d.clientErr = client.NewClientWithOpts(clientOpts...)
	d.images = newImageRefs(d)
	if opts.Config.GC.Dangling.Enabled && d.docker != nil {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.reapLoop()
		}()
	}
	return d
}

// Name returns "docker".
func (d *Driver) Name() string { return Name }

// Capabilities: a container's root is its image, and it gets only the
// environment the task runner builds, never the agent's.
func (d *Driver) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{FSIsolation: drivers.FSIsolationImage, HostEnv: false}
}

// Fingerprint asks the daemon for its version and runtimes. An unreachable
// daemon leaves the driver detected but unhealthy, naming the error, so
// that `node status` says why docker jobs are not placed.
func (d *Driver) Fingerprint() *structs.DriverInfo {
	info := &structs.DriverInfo{Detected: true, UpdateTime: d.clock.Now(), Attributes: map[string]string{}}
	if d.clientErr != nil {
		info.HealthDescription = fmt.Sprintf("docker client: %v", d.clientErr)
		return info
	}
	ctx, cancel := context.WithTimeout(d.ctx, 5*time.Second)
	defer cancel()
	v, err := d.docker.ServerVersion(ctx)
	if err != nil {
		info.HealthDescription = fmt.Sprintf("Failed to connect to docker daemon: %v", err)
		return info
	}
	info.Attributes["version"] = v.Version
	info.Attributes["os_type"] = v.Os
	if sys, err := d.docker.Info(ctx); err == nil {
		names := make([]string, 0, len(sys.Runtimes))
		for n := range sys.Runtimes {
			names = append(names, n)
		}
		sort.Strings(names)
		info.Attributes["runtimes"] = strings.Join(names, ",")
	}
	if d.opts.Config.AllowPrivileged {
		info.Attributes["privileged.enabled"] = "true"
	}
	if d.opts.Config.VolumesEnabled {
		info.Attributes["volumes.enabled"] = "true"
	}
	info.Healthy = true
	info.HealthDescription = "Healthy"
	return info
}

// HealthMayHaveChanged receives a value after a daemon call failed in a
// way that a stopped daemon explains (a waiter or a log stream lost its
// connection).
func (d *Driver) HealthMayHaveChanged() <-chan struct{} { return d.healthNotice }

// noticeHealth tells the health loop to fingerprint again, without
// blocking: a notice not taken yet stands for this one too.
func (d *Driver) noticeHealth() {
	select {
	case d.healthNotice <- struct{}{}:
	default:
	}
}

// Shutdown stops the driver's goroutines (waiters, log copiers, reaper,
// pending image removals). Containers keep running so that the next
// client can re-attach.
func (d *Driver) Shutdown() {
	d.cancel()
	d.wg.Wait()
	if d.docker != nil {
		_ = d.docker.Close()
	}
}

func (d *Driver) lookup(id string) (*task, error) {
	return drivers.LookupTask(&d.mu, d.tasks, id)
}

// tracked reports whether a container belongs to a task the driver holds.
func (d *Driver) tracked(containerID string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range d.tasks {
		if t.containerID == containerID {
			return true
		}
	}
	return false
}

// call returns a context for one prompt daemon call.
func (d *Driver) call() (context.Context, context.CancelFunc) {
	return context.WithTimeout(d.ctx, daemonTimeout)
}
