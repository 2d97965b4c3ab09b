package taskuser

import (
	"fmt"
	"os/user"
	"slices"
	"strconv"
	"strings"
)

// Client options (and node attributes) and their defaults, Nomad's: the
// drivers checked are those that run a task as a host user; a container's
// or a VM's root is not the host's.
const (
	DenylistOption        = "user.denylist"
	CheckedDriversOption  = "user.checked_drivers"
	DefaultDenylist       = "root,Administrator"
	DefaultCheckedDrivers = "exec,qemu,java"
	// DefaultIsolatedUser runs a task of a driver that isolates its file
	// system when the task names no user.
	DefaultIsolatedUser = "nobody"
)

// Policy is the client's user.denylist for the drivers it checks.
type Policy struct {
	Denylist       []string
	CheckedDrivers []string
}

// ParsePolicy reads the two options; an option that is unset takes its
// default, one set to "" turns the check off.
func ParsePolicy(options map[string]string) Policy {
	read := func(key, def string) []string {
		v, ok := options[key]
		if !ok {
			v = def
		}
		return SplitList(v)
	}
	return Policy{Denylist: read(DenylistOption, DefaultDenylist), CheckedDrivers: read(CheckedDriversOption, DefaultCheckedDrivers)}
}

// SplitList splits a comma-separated option, dropping blanks.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Attributes are the node attributes that carry the policy to the
// scheduler.
func (p Policy) Attributes() map[string]string {
	return map[string]string{DenylistOption: strings.Join(p.Denylist, ","), CheckedDriversOption: strings.Join(p.CheckedDrivers, ",")}
}

// DeniedError is a task whose user the client refuses for its driver.
type DeniedError struct {
	User, Driver string
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("user %q is in the client's %s for driver %s (%s); run the task as another user or change the client's options",
		e.User, DenylistOption, e.Driver, CheckedDriversOption)
}

// Check refuses user (already resolved: see the package doc) for driver
// when the policy checks that driver and denies that user.
func (p Policy) Check(driver, user string) error {
	if user != "" && slices.Contains(p.CheckedDrivers, driver) && slices.Contains(p.Denylist, user) {
		return &DeniedError{User: user, Driver: driver}
	}
	return nil
}

// User is a resolved account.
type User struct {
	Name     string
	UID, GID int
}

// Lookup resolves a user name (or a numeric uid) on this host.
func Lookup(name string) (User, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if _, numErr := strconv.Atoi(name); numErr == nil {
			u, err = user.LookupId(name)
		}
	}
	if err != nil {
		return User{}, fmt.Errorf("task user %q: %w", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return User{}, fmt.Errorf("task user %q: uid %q or gid %q is not a number", name, u.Uid, u.Gid)
	}
	return User{Name: u.Username, UID: uid, GID: gid}, nil
}

// Current is the client's own user, which runs the tasks of a driver
// without isolation (raw_exec) that name no user.
func Current() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	return u.Username
}
