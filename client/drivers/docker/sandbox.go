package docker

import (
	"fmt"
	"strconv"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// An alloc in a group network (bridge, none, cni/*) with docker tasks gets
// a sandbox: a pause container of the plugin's infra_image, created with
// network_mode "none", whose network namespace the client attaches
// through CNI and pins, so that exec tasks of the alloc join the same one
// by path. Every docker task of the alloc runs with network_mode
// "container:<sandbox>". This is Nomad's design, and the only one Docker
// allows: a container cannot be put into a namespace that Docker did not
// make (there is no network_mode naming a path). The sandbox also carries
// the group's dns block, since Docker refuses DNS options on a container
// that joins another's network, and gives those containers its
// resolv.conf.

// LabelSandbox marks an alloc's pause container.
const LabelSandbox = "com.hashicorp.nomad.alloc_sandbox"

// SandboxName is the pause container's name, Nomad's.
func SandboxName(allocID string) string { return "nomad_init_" + allocID }

// CreateSandbox starts the alloc's pause container (a leftover of an
// earlier try is replaced) and returns the path of its network namespace.
func (d *Driver) CreateSandbox(allocID string, dns *structs.DNSConfig) (string, error) {
	if d.clientErr != nil {
		return "", fmt.Errorf("docker: %w: %v", drivers.ErrDisabled, d.clientErr)
	}
	img := &TaskConfig{Image: d.opts.Config.InfraImage, ImagePullTimeout: d.opts.Config.InfraImagePullTimeout}
	imageID, err := d.images.ensure(img)
	if err != nil {
		return "", fmt.Errorf("docker: the alloc's pause container (infra_image): %w", err)
	}
	// The sandbox is not a task: it holds the image only while it starts.
	defer d.images.release(imageID, img.Image)
	labels := map[string]string{LabelAllocID: allocID, LabelSandbox: "true"}
	if node := d.opts.NodeID(); node != "" {
		labels[LabelNodeID] = node
	}
	hc := &container.HostConfig{NetworkMode: "none"}
	if dns != nil {
		hc.DNS, hc.DNSSearch, hc.DNSOptions = dns.Servers, dns.Searches, dns.Options
	}
	// A small, fixed grant: the pause process only sleeps.
	hc.Memory, hc.MemorySwap, hc.CPUShares = 16<<20, 16<<20, 2
	name := SandboxName(allocID)
	if err := d.removeContainer(name); err != nil {
		return "", fmt.Errorf("docker: removing a leftover pause container %s: %w", name, err)
	}
	ctx, cancel := d.call()
	defer cancel()
	created, err := d.docker.ContainerCreate(ctx, &container.Config{Image: img.Image, Labels: labels}, hc, nil, nil, name)
	if err != nil {
		return "", fmt.Errorf("docker: creating the alloc's pause container: %w", err)
	}
	if err := d.docker.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		_ = d.removeContainer(created.ID)
		return "", fmt.Errorf("docker: starting the alloc's pause container: %w", err)
	}
	info, err := d.docker.ContainerInspect(ctx, created.ID)
	if err != nil || info.State == nil || info.State.Pid == 0 {
		_ = d.removeContainer(created.ID)
		return "", fmt.Errorf("docker: the alloc's pause container does not run (image %q must run a process that stays): %v", img.Image, err)
	}
	return "/proc/" + strconv.Itoa(info.State.Pid) + "/ns/net", nil
}

// DestroySandbox removes the alloc's pause container; one that is gone
// is not an error.
func (d *Driver) DestroySandbox(allocID string) error {
	if d.clientErr != nil {
		return nil
	}
	return d.removeContainer(SandboxName(allocID))
}

// sandboxNetwork sets a task of an alloc with its own network to join
// the alloc's sandbox, refusing what Docker would refuse there.
func (d *Driver) sandboxNetwork(cfg *drivers.TaskConfig, tc *TaskConfig, hc *container.HostConfig) error {
	if cfg.NetNSPath == "" {
		return nil
	}
	switch {
	case tc.NetworkMode != "":
		return fmt.Errorf("docker config: network_mode %q cannot be set in a group whose network has its own mode (bridge, none, cni/*): the task joins the alloc's network", tc.NetworkMode)
	case len(tc.DNSServers)+len(tc.DNSSearchDomains)+len(tc.DNSOptions) > 0:
		return fmt.Errorf("docker config: dns_servers, dns_search_domains and dns_options cannot be set in a group with its own network: use the group's network { dns { ... } } block")
	case tc.Hostname != "":
		return fmt.Errorf("docker config: hostname cannot be set in a group with its own network (the task shares the alloc's)")
	}
	ctx, cancel := d.call()
	defer cancel()
	info, err := d.docker.ContainerInspect(ctx, SandboxName(cfg.AllocID))
	if cerrdefs.IsNotFound(err) {
		return fmt.Errorf("docker: the alloc's pause container %s is gone", SandboxName(cfg.AllocID))
	}
	if err != nil {
		return &drivers.RecoverableError{Err: fmt.Errorf("docker: inspecting the alloc's pause container: %w", err)}
	}
	hc.NetworkMode = container.NetworkMode("container:" + info.ID)
	return nil
}
