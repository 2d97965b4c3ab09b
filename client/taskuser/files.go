package taskuser

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoEtc is a resolver asked for a user with no /etc to read.
var ErrNoEtc = errors.New("the client's chroot_env maps no /etc, so no user can be resolved")

// LookupFiles resolves name (or a numeric uid) against the passwd and
// group files in etc, the directory a task's /etc is copied from. The
// exec driver runs the task with these ids and the task runner gives the
// task's directories to them, so both must read the same files rather
// than ask the C library, whose NSS may answer differently.
func LookupFiles(etc, name string) (User, error) {
	if etc == "" {
		return User{}, ErrNoEtc
	}
	passwd := filepath.Join(etc, "passwd")
	u := User{UID: -1}
	err := eachLine(passwd, func(f []string) bool {
		if len(f) < 4 || (f[0] != name && f[2] != name) {
			return true
		}
		uid, err1 := strconv.ParseUint(f[2], 10, 32)
		gid, err2 := strconv.ParseUint(f[3], 10, 32)
		if err1 != nil || err2 != nil {
			return true
		}
		u = User{Name: f[0], UID: int(uid), GID: int(gid)}
		return false
	})
	if err != nil {
		return User{}, fmt.Errorf("task user %q: %w", name, err)
	}
	if u.UID < 0 {
		return User{}, fmt.Errorf("task user %q: not found in %s (the task's /etc/passwd)", name, passwd)
	}
	u.Groups = []int{u.GID}
	_ = eachLine(filepath.Join(etc, "group"), func(f []string) bool {
		if len(f) < 4 {
			return true
		}
		for _, m := range strings.Split(f[3], ",") {
			if m == u.Name {
				if gid, err := strconv.ParseUint(f[2], 10, 32); err == nil && int(gid) != u.GID {
					u.Groups = append(u.Groups, int(gid))
				}
			}
		}
		return true
	})
	return u, nil
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
