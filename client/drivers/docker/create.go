package docker

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/go-connections/nat"
	"github.com/docker/go-units"

	"github.com/drover-sched/drover/client/drivers"
)

// createSpec is everything ContainerCreate takes.
type createSpec struct {
	Name       string
	Config     *container.Config
	HostConfig *container.HostConfig
	Network    *network.NetworkingConfig
}

// buildSpec turns one task attempt into a container. It checks the task
// config against what the plugin config allows and returns an error that
// names the refused key; nothing is created on the daemon.
func (d *Driver) buildSpec(cfg *drivers.TaskConfig, tc *TaskConfig) (*createSpec, error) {
	pc := d.opts.Config
	labels := map[string]string{}
	for k, v := range tc.Labels {
		labels[k] = v
	}
	labels[LabelAllocID] = cfg.AllocID
	labels[LabelTaskName] = cfg.TaskName
	labels[LabelTaskID] = cfg.ID
	labels[LabelJobName] = cfg.JobName
	labels[LabelGroup] = cfg.GroupName
	if node := d.opts.NodeID(); node != "" {
		labels[LabelNodeID] = node
	}

	cc := &container.Config{
		Image:      tc.Image,
		Env:        sortedEnv(cfg.Env),
		Labels:     labels,
		WorkingDir: tc.WorkDir,
		User:       cfg.User,
		Hostname:   tc.Hostname,
		Tty:        tc.TTY,
		OpenStdin:  tc.Interactive,
	}
	if tc.Command != "" {
		cc.Cmd = append([]string{tc.Command}, tc.Args...)
	} else if len(tc.Args) > 0 {
		cc.Cmd = tc.Args
	}
	if len(tc.Entrypoint) > 0 {
		cc.Entrypoint = tc.Entrypoint
	}
	if tc.HealthchecksOff {
		cc.Healthcheck = &container.HealthConfig{Test: []string{"NONE"}}
	}

	hc := &container.HostConfig{
		NetworkMode:    container.NetworkMode(tc.NetworkMode),
		Privileged:     tc.Privileged,
		DNS:            tc.DNSServers,
		DNSSearch:      tc.DNSSearchDomains,
		DNSOptions:     tc.DNSOptions,
		ExtraHosts:     tc.ExtraHosts,
		SecurityOpt:    tc.SecurityOpt,
		ReadonlyRootfs: tc.ReadonlyRootfs,
		ShmSize:        tc.ShmSize,
		Sysctls:        tc.Sysctl,
		IpcMode:        container.IpcMode(tc.IPCMode),
		PidMode:        container.PidMode(tc.PidMode),
		UTSMode:        container.UTSMode(tc.UTSMode),
		UsernsMode:     container.UsernsMode(tc.UsernsMode),
		VolumeDriver:   tc.VolumeDriver,
	}
	if tc.Init {
		b := true
		hc.Init = &b
	}
	if tc.Privileged && !pc.AllowPrivileged {
		return nil, fmt.Errorf(`docker config: "privileged" is not allowed on this client (the agent's plugin "docker" config sets allow_privileged = false)`)
	}
	if err := checkSecurityOpt(tc, pc); err != nil {
		return nil, err
	}
	if err := checkHostNamespaces(tc, pc); err != nil {
		return nil, err
	}
	if err := checkSysctl(tc); err != nil {
		return nil, err
	}
	if err := d.setResources(cfg, tc, hc); err != nil {
		return nil, err
	}
	if err := setCaps(tc, pc, hc); err != nil {
		return nil, err
	}
	if err := setMounts(cfg, tc, pc, hc); err != nil {
		return nil, err
	}
	if err := setPorts(cfg, tc, cc, hc); err != nil {
		return nil, err
	}
	if tc.Logging != nil && tc.Logging.Type != "" {
		hc.LogConfig = container.LogConfig{Type: tc.Logging.Type, Config: tc.Logging.Config}
	}
	return &createSpec{Name: containerName(cfg), Config: cc, HostConfig: hc}, nil
}

// setResources maps the task's grant onto the container's cgroup, as
// Nomad does: memory is the hard limit, unless memory_max (or the task's
// memory_hard_limit) raises it, in which case memory is the soft
// reservation.
func (d *Driver) setResources(cfg *drivers.TaskConfig, tc *TaskConfig, hc *container.HostConfig) error {
	r := cfg.Resources
	const mb = 1 << 20
	switch {
	case tc.MemoryHardLimit > 0:
		if tc.MemoryHardLimit < r.MemoryMB {
			return fmt.Errorf("docker config: memory_hard_limit %d is below the task's memory %d (it must be at least the reservation)", tc.MemoryHardLimit, r.MemoryMB)
		}
		hc.Memory, hc.MemoryReservation = tc.MemoryHardLimit*mb, r.MemoryMB*mb
	case r.MemoryMaxMB > r.MemoryMB:
		hc.Memory, hc.MemoryReservation = r.MemoryMaxMB*mb, r.MemoryMB*mb
	case r.MemoryMB > 0:
		hc.Memory = r.MemoryMB * mb
	}
	if hc.Memory > 0 {
		// No swap beyond the limit: the limit is the limit.
		hc.MemorySwap = hc.Memory
	}
	if r.CPUShares > 0 {
		// The kernel's minimum weight is 2.
		hc.CPUShares = max(r.CPUShares, 2)
	}
	if tc.CPUHardLimit {
		period := tc.CPUCFSPeriod
		if period == 0 {
			period = 100000
		}
		if period < 1000 || period > 1000000 {
			return fmt.Errorf("docker config: cpu_cfs_period %d is out of range (1000 to 1000000 microseconds)", period)
		}
		var total int64
		var cores int
		if d.opts.NodeCPU != nil {
			total, cores = d.opts.NodeCPU()
		}
		if total <= 0 || cores <= 0 {
			return fmt.Errorf("docker config: cpu_hard_limit needs the node's CPU capacity, which the client has not reported")
		}
		hc.CPUPeriod = period
		hc.CPUQuota = max(int64(float64(period)*float64(r.CPUShares)/float64(total)*float64(cores)), 1000)
	}
	hc.CpusetCpus = tc.CPUSetCPUs
	if tc.PidsLimit != 0 {
		n := tc.PidsLimit
		hc.PidsLimit = &n
	}
	for _, name := range slices.Sorted(maps.Keys(tc.Ulimit)) {
		u, err := parseUlimit(name, tc.Ulimit[name])
		if err != nil {
			return err
		}
		hc.Ulimits = append(hc.Ulimits, u)
	}
	return nil
}

func parseUlimit(name, v string) (*container.Ulimit, error) {
	soft, hard, found := strings.Cut(v, ":")
	s, err := strconv.ParseInt(strings.TrimSpace(soft), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("docker config: ulimit %q = %q: want \"soft\" or \"soft:hard\" as numbers", name, v)
	}
	h := s
	if found {
		if h, err = strconv.ParseInt(strings.TrimSpace(hard), 10, 64); err != nil || h < s {
			return nil, fmt.Errorf("docker config: ulimit %q = %q: the hard limit must be a number at least the soft limit", name, v)
		}
	}
	if _, err := units.ParseUlimit(name + "=" + strconv.FormatInt(s, 10)); err != nil {
		return nil, fmt.Errorf("docker config: ulimit %q: %v", name, err)
	}
	return &container.Ulimit{Name: name, Soft: s, Hard: h}, nil
}

// dockerDefaultCaps is the capability set Docker gives a container.
var dockerDefaultCaps = []string{
	"audit_write", "chown", "dac_override", "fowner", "fsetid", "kill", "mknod", "net_bind_service",
	"net_raw", "setfcap", "setgid", "setpcap", "setuid", "sys_chroot",
}

// setCaps checks cap_add against the plugin's allow_caps and drops the
// default capabilities it does not allow (NET_RAW, by Nomad's default),
// so that a task never holds a capability the operator did not allow.
func setCaps(tc *TaskConfig, pc PluginConfig, hc *container.HostConfig) error {
	allowed := map[string]bool{}
	for _, c := range pc.AllowCaps {
		allowed[normCap(c)] = true
	}
	all := allowed["all"]
	drop := map[string]bool{}
	for _, c := range tc.CapDrop {
		drop[normCap(c)] = true
	}
	for _, c := range tc.CapAdd {
		n := normCap(c)
		if !all && !allowed[n] && !(n == "all" && all) {
			return fmt.Errorf("docker config: cap_add %q is not allowed on this client (allow_caps: %s)", c, strings.Join(pc.AllowCaps, ", "))
		}
		hc.CapAdd = append(hc.CapAdd, strings.ToUpper(n))
	}
	for _, c := range tc.CapDrop {
		hc.CapDrop = append(hc.CapDrop, strings.ToUpper(normCap(c)))
	}
	if all || drop["all"] || tc.Privileged {
		return nil
	}
	for _, c := range dockerDefaultCaps {
		if !allowed[c] && !drop[c] {
			hc.CapDrop = append(hc.CapDrop, strings.ToUpper(c))
		}
	}
	return nil
}

func normCap(c string) string {
	return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(c)), "cap_")
}

// setMounts binds the task's directories at Nomad's paths and adds the
// task's volumes and mount blocks. Host paths and named volumes need the
// plugin's volumes { enabled = true }; paths relative to the task
// directory and tmpfs mounts are always allowed, as in Nomad.
func setMounts(cfg *drivers.TaskConfig, tc *TaskConfig, pc PluginConfig, hc *container.HostConfig) error {
	if cfg.AllocDir != "" {
		hc.Binds = append(hc.Binds, filepath.Join(cfg.AllocDir, "alloc")+":"+drivers.TaskAllocDir)
	}
	if cfg.TaskDir != "" {
		hc.Binds = append(hc.Binds,
			filepath.Join(cfg.TaskDir, "local")+":"+drivers.TaskLocalDir,
			filepath.Join(cfg.TaskDir, "secrets")+":"+drivers.TaskSecretsDir)
	}
	for i, v := range tc.Volumes {
		parts := strings.SplitN(v, ":", 3)
		if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
			return fmt.Errorf("docker config: volumes[%d] %q: want \"source:target\" or \"source:target:mode\"", i, v)
		}
		src, err := hostSource(cfg, pc, parts[0], fmt.Sprintf("volumes[%d]", i), false)
		if err != nil {
			return err
		}
		parts[0] = src
		hc.Binds = append(hc.Binds, strings.Join(parts, ":"))
	}
	for i, m := range tc.Mounts {
		field := fmt.Sprintf("mount[%d]", i)
		if m.Target == "" {
			return fmt.Errorf("docker config: %s.target is missing (the path inside the container)", field)
		}
		dm := mount.Mount{Target: m.Target, ReadOnly: m.ReadOnly}
		switch m.Type {
		case "", "bind":
			src, err := hostSource(cfg, pc, m.Source, field+".source", true)
			if err != nil {
				return err
			}
			dm.Type, dm.Source = mount.TypeBind, src
			if m.Propagation != "" {
				dm.BindOptions = &mount.BindOptions{Propagation: mount.Propagation(m.Propagation)}
			}
		case "volume":
			if !pc.VolumesEnabled {
				return fmt.Errorf("docker config: %s is a volume, but volumes are disabled on this client (plugin \"docker\" config volumes { enabled = true })", field)
			}
			dm.Type, dm.Source = mount.TypeVolume, m.Source
			dm.VolumeOptions = &mount.VolumeOptions{NoCopy: m.VolumeNoCopy, Labels: m.VolumeLabels}
		case "tmpfs":
			if m.Source != "" {
				return fmt.Errorf("docker config: %s.source must be empty for a tmpfs mount", field)
			}
			dm.Type = mount.TypeTmpfs
			dm.TmpfsOptions = &mount.TmpfsOptions{SizeBytes: m.TmpfsSize}
			if m.hasTmpfsMode {
				// The permission bits; docker applies no others.
				dm.TmpfsOptions.Mode = os.FileMode(m.TmpfsMode) & os.ModePerm
			}
		default:
			return fmt.Errorf("docker config: %s.type %q is not one of bind, volume, tmpfs", field, m.Type)
		}
		hc.Mounts = append(hc.Mounts, dm)
	}
	vols, err := volumeMounts(cfg)
	if err != nil {
		return err
	}
	hc.Mounts = append(hc.Mounts, vols...)
	return nil
}

// hostSource resolves a bind's source: relative paths against the task
// directory, and kept inside the alloc directory (see insideAllocDir),
// absolute paths and named volumes only with volumes enabled. In a
// volumes entry, as in docker's -v, a bare name is a named volume; a bind
// mount block's source is always a path.
func hostSource(cfg *drivers.TaskConfig, pc PluginConfig, src, field string, bind bool) (string, error) {
	if src == "" {
		return "", fmt.Errorf("docker config: %s is empty (a path relative to the task directory, or a host path)", field)
	}
	if filepath.IsAbs(src) || !bind && !strings.ContainsAny(src, "/.") {
		if !pc.VolumesEnabled {
			return "", fmt.Errorf("docker config: %s %q is a host path or named volume, but volumes are disabled on this client (plugin \"docker\" config volumes { enabled = true }); paths relative to the task directory are allowed", field, src)
		}
		return src, nil
	}
	p, err := insideAllocDir(cfg, src)
	if err != nil {
		return "", fmt.Errorf("docker config: %s %q leaves the alloc directory (%v); a relative source must name a path inside it, and a host path must be written as one, which needs volumes { enabled = true } in the plugin config", field, src, err)
	}
	return p, nil
}

// insideAllocDir resolves src, relative to the task directory, through
// every symlink on the way and returns the path it names, which must be
// inside the alloc directory. Links are followed because the daemon
// follows them on the host: a task can plant local/root -> / from inside
// its container (where it means the container's root), and its next
// attempt would otherwise bind the host's root. The resolved path is what
// gets bound, so a link swapped after this check is not followed again
// by the daemon. Components that do not exist yet (docker creates a
// missing volumes source) cannot be links.
func insideAllocDir(cfg *drivers.TaskConfig, src string) (string, error) {
	root := cfg.AllocDir
	if root == "" {
		root = cfg.TaskDir
	}
	if root == "" || cfg.TaskDir == "" {
		return "", fmt.Errorf("the task has no directory to resolve it against")
	}
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	p, err := resolveExisting(filepath.Join(cfg.TaskDir, src))
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("it resolves to %s", p)
	}
	return p, nil
}

// resolveExisting evaluates the symlinks of the longest existing prefix
// of the clean, absolute path p and appends the rest. A dangling link is
// refused rather than treated as missing.
func resolveExisting(p string) (string, error) {
	rest := ""
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !os.IsNotExist(err) {
			return "", err
		}
		if _, lerr := os.Lstat(p); lerr == nil {
			// A link to nothing: the daemon would create its target.
			return "", fmt.Errorf("%s is a link to a path that does not exist", p)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// setPorts publishes the task's port labels: each alloc port's host value
// (on its host IP) to its `to` port in the container, or to the same port
// when `to` is unset (0 or -1), on tcp and udp as Nomad does.
func setPorts(cfg *drivers.TaskConfig, tc *TaskConfig, cc *container.Config, hc *container.HostConfig) error {
	if len(tc.Ports) == 0 || cfg.NetNSPath != "" {
		// In the alloc's own network the client maps the group's ports
		// (client/network); the container publishes none itself.
		return nil
	}
	mode := tc.NetworkMode
	if mode == "none" || strings.HasPrefix(mode, "container:") {
		return fmt.Errorf("docker config: \"ports\" cannot be published with network_mode %q", mode)
	}
	if mode == "host" {
		// The task binds its host ports itself.
		return nil
	}
	labels := make([]string, 0, len(cfg.Resources.Ports))
	for _, p := range cfg.Resources.Ports {
		labels = append(labels, p.Label)
	}
	cc.ExposedPorts = nat.PortSet{}
	hc.PortBindings = nat.PortMap{}
	for _, label := range tc.Ports {
		var found bool
		for _, p := range cfg.Resources.Ports {
			if p.Label != label || found {
				continue
			}
			found = true
			to := p.To
			if to <= 0 {
				to = p.Value
			}
			for _, proto := range []string{"tcp", "udp"} {
				cp := nat.Port(fmt.Sprintf("%d/%s", to, proto))
				cc.ExposedPorts[cp] = struct{}{}
				hc.PortBindings[cp] = append(hc.PortBindings[cp], nat.PortBinding{HostIP: p.HostIP, HostPort: strconv.Itoa(p.Value)})
			}
		}
		if !found {
			return fmt.Errorf("docker config: ports label %q is not a port of the group's network block (its ports: %s)", label, strings.Join(labels, ", "))
		}
	}
	return nil
}

var nameUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_.-]`)

// containerName is Nomad's <task>-<alloc ID>, with the attempt's suffix so
// that a restart's new container does not collide with the old one.
func containerName(cfg *drivers.TaskConfig) string {
	suffix := cfg.ID
	if i := strings.LastIndexByte(suffix, '/'); i >= 0 {
		suffix = suffix[i+1:]
	}
	name := nameUnsafe.ReplaceAllString(cfg.TaskName, "_") + "-" + cfg.AllocID + "-" + nameUnsafe.ReplaceAllString(suffix, "_")
	return strings.TrimLeft(name, "_.-")
}

func sortedEnv(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}
