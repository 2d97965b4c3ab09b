package checks

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"time"

	"github.com/drover-sched/drover/structs"
)

// Check types.
const (
	TypeHTTP   = "http"
	TypeTCP    = "tcp"
	TypeScript = "script"
)

// Check modes, as Nomad names them: a healthiness check counts for the
// alloc's health; a readiness check (on_update = "ignore") is run and
// shown but does not.
const (
	ModeHealthiness = "healthiness"
	ModeReadiness   = "readiness"
)

// Limits and defaults.
const (
	// MinInterval is the shortest interval a check runs at.
	MinInterval = time.Second
	// DefaultTimeout is a check's timeout when its block sets none.
	DefaultTimeout = 10 * time.Second
	// MaxOutput is how much of a check's output is kept.
	MaxOutput = 4 << 10
)

// Spec is one check of the alloc, resolved against the alloc: its ID,
// where it probes, and how often.
type Spec struct {
	ID      string
	Name    string
	Type    string
	Mode    string
	Group   string
	Task    string // the service's task, or the check's task for a group service
	Service string

	// Address is host:port for http and tcp checks; AddressErr says why
	// there is none (the check then fails with it).
	Address    string
	AddressErr string

	Method, Path, Protocol string
	Header                 map[string][]string
	Body                   string
	TLSSkipVerify          bool

	Command string
	Args    []string

	Interval, Timeout time.Duration
	InitialStatus     string // a Status*, or "" for pending
	// IgnoreWarnings counts a warning as passing for the alloc's health
	// (on_update = "ignore_warnings").
	IgnoreWarnings bool
	// Restart is the check's check_restart block, or its service's; nil
	// or a zero limit restarts nothing.
	Restart *structs.CheckRestart
}

// Equal reports whether s and o are the same check, run the same way.
func (s Spec) Equal(o Spec) bool { return reflect.DeepEqual(s, o) }

// SpecsFor returns the checks of every service of the alloc's group and
// tasks, in the job's order. nodeIP is the address used for a port that
// the alloc's networks do not place on an IP of their own.
func SpecsFor(a *structs.Allocation, nodeIP string) []Spec {
	tg := a.LookupTaskGroup()
	if tg == nil {
		return nil
	}
	var out []Spec
	add := func(svc *structs.Service, task string) {
		for i, c := range svc.Checks {
			out = append(out, newSpec(a, tg.Name, task, svc, c, i, nodeIP))
		}
	}
	for _, svc := range tg.Services {
		add(svc, svc.TaskName)
	}
	for _, t := range tg.Tasks {
		for _, svc := range t.Services {
			add(svc, t.Name)
		}
	}
	return out
}

func newSpec(a *structs.Allocation, group, task string, svc *structs.Service, c *structs.ServiceCheck, index int, nodeIP string) Spec {
	if c.TaskName != "" {
		task = c.TaskName
	}
	s := Spec{
		Name: c.Name, Type: c.Type, Mode: ModeHealthiness, Group: group, Task: task, Service: svc.Name,
		Method: c.Method, Path: c.Path, Protocol: c.Protocol, Header: c.Header, Body: c.Body, TLSSkipVerify: c.TLSSkipVerify,
		Command: c.Command, Args: c.Args,
		Interval: max(c.Interval, MinInterval), Timeout: c.Timeout,
		InitialStatus: initialStatus(c.InitialStatus), IgnoreWarnings: c.OnUpdate == "ignore_warnings",
		Restart: c.CheckRestart,
	}
	if s.Name == "" {
		s.Name = fmt.Sprintf("service: %q check", svc.Name)
	}
	if c.OnUpdate == "ignore" {
		s.Mode = ModeReadiness
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Restart == nil {
		s.Restart = svc.CheckRestart
	}
	h := sha256.New()
	for _, part := range []string{a.ID, group, task, svc.Name, c.Name, c.Type, strconv.Itoa(index)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	s.ID = hex.EncodeToString(h.Sum(nil)[:16])
	if s.Type == TypeHTTP || s.Type == TypeTCP {
		label := c.PortLabel
		if label == "" {
			label = svc.PortLabel
		}
		s.Address, s.AddressErr = address(a, task, label, svc.Address, nodeIP)
	}
	return s
}

// initialStatus maps a check's initial_status (Consul's words) to a
// result status.
func initialStatus(s string) string {
	switch s {
	case "passing":
		return StatusSuccess
	case "warning":
		return StatusWarning
	case "critical":
		return StatusFailure
	}
	return StatusPending
}

// address finds where a check probes: the port label mapped through the
// alloc's networks (the group network's ports first, then the task's),
// on the IP the port was granted on, else the network's IP, else the
// node's. A numeric label is a port number on that IP. A service address
// replaces the IP.
func address(a *structs.Allocation, task, label, svcAddr, nodeIP string) (string, string) {
	if label == "" {
		return "", "the check and its service name no port (set port in the service or check block)"
	}
	host, port := "", 0
	if r := a.AllocatedResources; r != nil {
		if m, ok := r.Shared.Ports.Get(label); ok {
			host, port = m.HostIP, m.Value
		}
		if port == 0 {
			host, port = networkPort(r.Shared.Networks, label)
		}
		if t := r.Tasks[task]; port == 0 && t != nil {
			host, port = networkPort(t.Networks, label)
		}
		if host == "" {
			for _, n := range r.Shared.Networks {
				if n.IP != "" {
					host = n.IP
					break
				}
			}
		}
	}
	if port == 0 {
		n, err := strconv.Atoi(label)
		if err != nil || n <= 0 || n > 65535 {
			return "", fmt.Sprintf("port %q is not a port label of the alloc's networks", label)
		}
		port = n
	}
	if svcAddr != "" {
		host = svcAddr
	}
	if host == "" {
		host = nodeIP
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), ""
}

func networkPort(ns structs.Networks, label string) (string, int) {
	for _, n := range ns {
		for _, p := range append(append([]structs.Port(nil), n.ReservedPorts...), n.DynamicPorts...) {
			if p.Label == label {
				return n.IP, p.Value
			}
		}
	}
	return "", 0
}
