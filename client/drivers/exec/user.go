package exec

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// credentials are a task user's ids.
type credentials struct {
	Uid, Gid uint32
	Groups   []uint32
}

// lookupUser resolves name (or a numeric uid) against the passwd and
// group files the task's /etc is copied from, so that the driver and the
// task agree on who the user is. It reads the files itself rather than
// asking the C library: the answer must come from these files, not from
// whatever NSS the host is configured with.
func lookupUser(etc, name string) (credentials, error) {
	if etc == "" {
		return credentials{}, errNoEtc
	}
	var c credentials
	found := false
	err := eachLine(filepath.Join(etc, "passwd"), func(f []string) bool {
		if len(f) < 4 || (f[0] != name && f[2] != name) {
			return true
		}
		uid, err1 := strconv.ParseUint(f[2], 10, 32)
		gid, err2 := strconv.ParseUint(f[3], 10, 32)
		if err1 != nil || err2 != nil {
			return true
		}
		c.Uid, c.Gid, found = uint32(uid), uint32(gid), true
		name = f[0]
		return false
	})
	if err != nil {
		return c, err
	}
	if !found {
		return c, fmt.Errorf("task user %q: not found in %s (the task's /etc/passwd)", name, filepath.Join(etc, "passwd"))
	}
	c.Groups = []uint32{c.Gid}
	_ = eachLine(filepath.Join(etc, "group"), func(f []string) bool {
		if len(f) < 4 {
			return true
		}
		for _, m := range strings.Split(f[3], ",") {
			if m == name {
				if gid, err := strconv.ParseUint(f[2], 10, 32); err == nil && uint32(gid) != c.Gid {
					c.Groups = append(c.Groups, uint32(gid))
				}
			}
		}
		return true
	})
	return c, nil
}

func eachLine(path string, fn func([]string) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !fn(strings.Split(line, ":")) {
			return nil
		}
	}
	return s.Err()
}
