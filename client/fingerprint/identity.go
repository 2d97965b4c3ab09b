package fingerprint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// Identity file names in the client's state dir, as in Nomad.
const (
	idFile     = "client-id"
	secretFile = "secret-id"
)

// LoadIdentity returns the node's ID and secret, creating and persisting
// them the first time. The ID must survive restarts: it is how the servers
// know that a restarted client is the same node with the same allocs.
func LoadIdentity(stateDir string) (id, secret string, err error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", "", err
	}
	id, err = loadOrCreate(filepath.Join(stateDir, idFile))
	if err != nil {
		return "", "", err
	}
	secret, err = loadOrCreate(filepath.Join(stateDir, secretFile))
	return id, secret, err
}

func loadOrCreate(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if v := strings.TrimSpace(string(b)); v != "" {
			return v, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read node identity %s: %w", path, err)
	}
	v := structs.GenerateUUID()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(v), 0o600); err != nil {
		return "", fmt.Errorf("write node identity: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write node identity: %w", err)
	}
	return v, nil
}
