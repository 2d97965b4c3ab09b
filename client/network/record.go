package network

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// record is what the client keeps about one alloc's network, written
// before anything is created and removed only after everything is gone
// (see the package doc).
type record struct {
	AllocID string
	// NetNS is the pinned namespace's path.
	NetNS string
	// ConfList is the conflist the alloc was attached with: its DEL must
	// see the same plugins even if the client's config changed since.
	ConfList json.RawMessage
	IfName   string
	Ports    []PortMapping `json:",omitempty"`
	// Address is the alloc's IPv4 address, once attached.
	Address string `json:",omitempty"`
	// Sandbox: the namespace is a sandbox's (Config.Sandboxes), pinned.
	Sandbox bool `json:",omitempty"`
	// ResolvConf is the host path of the namespace's resolv.conf, when the
	// group has a dns block.
	ResolvConf string `json:",omitempty"`
}

const recordExt = ".json"

func (m *Manager) recordPath(allocID string) string {
	return filepath.Join(m.cfg.StateDir, allocID+recordExt)
}

// writeRecord replaces the alloc's record atomically, so a crash leaves
// the old or the new one, never half of one.
func (m *Manager) writeRecord(r *record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(m.cfg.StateDir, 0o700); err != nil {
		return fmt.Errorf("network state dir: %w", err)
	}
	tmp := m.recordPath(r.AllocID) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write network record: %w", err)
	}
	if err := os.Rename(tmp, m.recordPath(r.AllocID)); err != nil {
		return fmt.Errorf("write network record: %w", err)
	}
	return nil
}

// readRecord returns the alloc's record, or os.ErrNotExist.
func (m *Manager) readRecord(allocID string) (*record, error) {
	b, err := os.ReadFile(m.recordPath(allocID))
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("network record of alloc %s: %w", allocID, err)
	}
	return &r, nil
}

func (m *Manager) deleteRecord(allocID string) error {
	err := os.Remove(m.recordPath(allocID))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// recordedAllocs lists the allocs that have a record.
func (m *Manager) recordedAllocs() ([]string, error) {
	entries, err := os.ReadDir(m.cfg.StateDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), recordExt); ok && !e.IsDir() {
			out = append(out, id)
		}
	}
	return out, nil
}
