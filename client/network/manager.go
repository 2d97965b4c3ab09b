package network

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/structs"
)

// Modes other than host that this package sets up.
const (
	ModeBridge = "bridge"
	ModeNone   = "none"
	cniPrefix  = "cni/"
)

// pluginTimeout bounds one ADD or DEL of a whole conflist.
const pluginTimeout = time.Minute

// ifName is the alloc's interface inside its namespace.
const ifName = "eth0"

// NeedsNamespace reports whether a group network mode gets its own
// namespace (every mode but host).
func NeedsNamespace(mode string) bool {
	return mode == ModeBridge || mode == ModeNone || strings.HasPrefix(mode, cniPrefix)
}

// PortMapping is one host port mapped into the alloc's namespace, in
// the portMappings capability's shape.
type PortMapping struct {
	HostPort      int    `json:"hostPort"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol"`
	HostIP        string `json:"hostIP,omitempty"`
}

// Request is one alloc's network.
type Request struct {
	AllocID string
	// Mode is the group network's mode: bridge, none or cni/<name>.
	Mode string
	// Ports are the alloc's granted ports.
	Ports []structs.AllocatedPortMapping
	DNS   *structs.DNSConfig
	// Sandbox asks for the namespace to be a sandbox's (Config.Sandboxes):
	// the alloc has docker tasks.
	Sandbox bool
}

// Status is an alloc's network as the drivers need it.
type Status struct {
	// NetNSPath is the namespace every task of the alloc joins.
	NetNSPath string
	// Address is the alloc's IPv4 address in its namespace ("" for none),
	// on IfName.
	Address string
	IfName  string
	// ResolvConf is the host path of the namespace's resolv.conf, written
	// from the group's dns block ("" without one).
	ResolvConf string
}

// Manager sets up and tears down alloc networks. See the package doc.
type Manager struct {
	cfg    Config
	cni    *libcni.CNIConfig
	bridge []byte
	logger hclog.Logger
}

// NewManager checks cfg and returns a Manager.
func NewManager(cfg Config, logger hclog.Logger) (*Manager, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	m := &Manager{
		cfg:    cfg,
		cni:    libcni.NewCNIConfigWithCacheDir(cfg.CNIPath, cfg.CacheDir, nil),
		bridge: bridgeConfList(cfg.BridgeName, cfg.BridgeSubnet, cfg.HairpinMode),
		logger: logger.Named("network"),
	}
	return m, nil
}

// Config is the manager's configuration, defaults filled in.
func (m *Manager) Config() Config { return m.cfg }

// BridgeConfList is the conflist of mode bridge (for the client to
// write out where an operator can read it).
func (m *Manager) BridgeConfList() []byte { return append([]byte(nil), m.bridge...) }

// confList returns the conflist bytes of a mode.
func (m *Manager) confList(mode string) ([]byte, error) {
	switch {
	case mode == ModeBridge:
		return m.bridge, nil
	case mode == ModeNone:
		return noneConfList(), nil
	case strings.HasPrefix(mode, cniPrefix):
		name := strings.TrimPrefix(mode, cniPrefix)
		l, err := libcni.LoadConfList(m.cfg.CNIConfigDir, name)
		if err != nil {
			return nil, fmt.Errorf("network mode %q: no CNI network %q in cni_config_dir %s: %w", mode, name, m.cfg.CNIConfigDir, err)
		}
		return l.Bytes, nil
	}
	return nil, fmt.Errorf("network mode %q needs no namespace", mode)
}

// Setup creates the alloc's namespace and attaches it. On failure it
// leaves nothing behind.
func (m *Manager) Setup(ctx context.Context, req Request) (*Status, error) {
	if req.AllocID == "" || strings.ContainsAny(req.AllocID, "/\x00") || req.AllocID[0] == '.' {
		return nil, fmt.Errorf("network: alloc ID %q cannot name a namespace", req.AllocID)
	}
	conf, err := m.confList(req.Mode)
	if err != nil {
		return nil, err
	}
	r := &record{
		AllocID:  req.AllocID,
		NetNS:    filepath.Join(m.cfg.NetNSDir, req.AllocID),
		ConfList: conf,
		IfName:   ifName,
	}
	if req.Mode != ModeNone {
		r.Ports = portMappings(req.Ports)
	}
	if req.DNS != nil {
		r.ResolvConf = filepath.Join(m.cfg.StateDir, req.AllocID+".resolv.conf")
	}
	if req.Sandbox {
		if m.cfg.Sandboxes == nil {
			return nil, fmt.Errorf("network mode %q: docker tasks need the docker driver to hold the alloc's network, and it is not enabled", req.Mode)
		}
		r.Sandbox = true
	}
	if err := m.writeRecord(r); err != nil {
		return nil, err
	}
	st, err := m.attach(ctx, r, req.DNS)
	if err != nil {
		if terr := m.teardown(ctx, r); terr != nil {
			m.logger.Error("failed to undo a failed network setup", "alloc_id", req.AllocID, "error", terr)
		}
		return nil, err
	}
	return st, nil
}

func (m *Manager) attach(ctx context.Context, r *record, dns *structs.DNSConfig) (*Status, error) {
	list, err := libcni.ConfListFromBytes(r.ConfList)
	if err != nil {
		return nil, fmt.Errorf("network: CNI conflist: %w", err)
	}
	if r.Sandbox {
		src, err := m.cfg.Sandboxes.CreateSandbox(r.AllocID, dns)
		if err != nil {
			return nil, err
		}
		if err := pinNetNS(src, r.NetNS); err != nil {
			return nil, err
		}
	} else if err := createNetNS(r.NetNS); err != nil {
		return nil, err
	}
	if r.ResolvConf != "" {
		if err := os.WriteFile(r.ResolvConf, resolvConf(dns, readHostResolvConf()), 0o644); err != nil {
			return nil, fmt.Errorf("network: write resolv.conf: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, pluginTimeout)
	defer cancel()
	res, err := m.cni.AddNetworkList(ctx, list, m.runtimeConf(r))
	if err != nil {
		return nil, fmt.Errorf("network: attach alloc to CNI network %q: %w", list.Name, err)
	}
	r.Address = ipv4Of(res)
	if err := m.writeRecord(r); err != nil {
		return nil, err
	}
	return r.status(), nil
}

func (r *record) status() *Status {
	return &Status{NetNSPath: r.NetNS, Address: r.Address, IfName: r.IfName, ResolvConf: r.ResolvConf}
}

func (m *Manager) runtimeConf(r *record) *libcni.RuntimeConf {
	rt := &libcni.RuntimeConf{ContainerID: r.AllocID, NetNS: r.NetNS, IfName: r.IfName}
	if len(r.Ports) > 0 {
		rt.CapabilityArgs = map[string]any{"portMappings": r.Ports}
	}
	return rt
}

// Restore re-attaches to the network of an alloc that a previous client
// process set up, leaving it as it is.
func (m *Manager) Restore(allocID string) (*Status, error) {
	r, err := m.readRecord(allocID)
	if err != nil {
		return nil, fmt.Errorf("network: no record of alloc %s's network: %w", allocID, err)
	}
	if !isNetNS(r.NetNS) {
		return nil, fmt.Errorf("network: alloc %s's namespace %s is gone", allocID, r.NetNS)
	}
	return r.status(), nil
}

// Teardown detaches the alloc's namespace and removes it, with its port
// mappings and firewall rules. An alloc with no record has nothing to
// tear down.
func (m *Manager) Teardown(ctx context.Context, allocID string) error {
	r, err := m.readRecord(allocID)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return m.teardown(ctx, r)
}

func (m *Manager) teardown(ctx context.Context, r *record) error {
	var errs []error
	if list, err := libcni.ConfListFromBytes(r.ConfList); err != nil {
		errs = append(errs, fmt.Errorf("network: CNI conflist: %w", err))
	} else {
		ctx, cancel := context.WithTimeout(ctx, pluginTimeout)
		// Without its namespace (a crash before it was made, or after it
		// was removed), DEL still releases the address and port mappings;
		// the plugins skip what is inside.
		rt := m.runtimeConf(r)
		if !isNetNS(r.NetNS) {
			rt.NetNS = ""
		}
		if err := m.cni.DelNetworkList(ctx, list, rt); err != nil {
			errs = append(errs, fmt.Errorf("network: detach alloc %s from CNI network %q: %w", r.AllocID, list.Name, err))
		}
		cancel()
	}
	if err := removeNetNS(r.NetNS); err != nil {
		errs = append(errs, err)
	}
	if r.Sandbox {
		if m.cfg.Sandboxes == nil {
			errs = append(errs, fmt.Errorf("network: alloc %s's sandbox needs the docker driver to be removed, and it is not enabled", r.AllocID))
		} else if err := m.cfg.Sandboxes.DestroySandbox(r.AllocID); err != nil {
			errs = append(errs, fmt.Errorf("network: remove alloc %s's sandbox: %w", r.AllocID, err))
		}
	}
	if r.ResolvConf != "" {
		if err := os.Remove(r.ResolvConf); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		// The record stays, so the next Teardown or Reconcile tries again.
		return errors.Join(errs...)
	}
	return m.deleteRecord(r.AllocID)
}

// Reconcile tears down the network of every recorded alloc that keep
// rejects: after a restart, the allocs that stopped or were collected
// while the client was down.
func (m *Manager) Reconcile(ctx context.Context, keep func(allocID string) bool) error {
	ids, err := m.recordedAllocs()
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if keep(id) {
			continue
		}
		m.logger.Info("tearing down the network of an alloc that is gone", "alloc_id", id)
		if err := m.Teardown(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// portMappings maps each granted port for TCP and UDP, as Nomad does:
// the host's Value to the namespace's To (Value when To is unset or -1).
func portMappings(ports []structs.AllocatedPortMapping) []PortMapping {
	var out []PortMapping
	for _, p := range ports {
		to := p.To
		if to <= 0 {
			to = p.Value
		}
		ip := p.HostIP
		if ip == "0.0.0.0" {
			ip = ""
		}
		for _, proto := range []string{"tcp", "udp"} {
			out = append(out, PortMapping{HostPort: p.Value, ContainerPort: to, Protocol: proto, HostIP: ip})
		}
	}
	return out
}

// ipv4Of returns the first IPv4 address a result gives the alloc.
func ipv4Of(res types.Result) string {
	if res == nil {
		return ""
	}
	r, err := current.NewResultFromResult(res)
	if err != nil {
		return ""
	}
	for _, ip := range r.IPs {
		if ip.Address.IP.To4() != nil {
			return ip.Address.IP.String()
		}
	}
	return ""
}
