package taskuser

import (
	"fmt"
	"os/user"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/structs"
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
		return structs.SplitList(v)
	}
	return Policy{Denylist: read(DenylistOption, DefaultDenylist), CheckedDrivers: read(CheckedDriversOption, DefaultCheckedDrivers)}
}

// Attributes are the node attributes that carry the policy to the
// scheduler.
func (p Policy) Attributes() map[string]string {
	return map[string]string{DenylistOption: strings.Join(p.Denylist, ","), CheckedDriversOption: strings.Join(p.CheckedDrivers, ",")}
}

// DeniedError is a task whose user the client refuses for its driver.
// UID is set when the user was refused for the uid it resolves to (a
// numeric user, or another name of the same account), Denied then names
// the denylisted user with that uid.
type DeniedError struct {
	User, Driver string
	UID          int
	Denied       string
}

func (e *DeniedError) Error() string {
	who := fmt.Sprintf("user %q is in", e.User)
	if e.Denied != "" {
		who = fmt.Sprintf("user %q has uid %d, that of %q in", e.User, e.UID, e.Denied)
	}
	return fmt.Sprintf("%s the client's %s for driver %s (%s); run the task as another user or change the client's options",
		who, DenylistOption, e.Driver, CheckedDriversOption)
}

// Resolver finds the account a user name or numeric uid names, as the
// driver that runs the task will.
type Resolver func(name string) (User, error)

// Check refuses user (already resolved: see the package doc) for driver
// when the policy checks that driver and denies that user: by its name,
// or by its uid when that is the uid of a denylisted name. Both resolve
// through resolve, the driver's own resolver, so neither "0" nor another
// name for root (toor) passes a denylist that holds root. root's uid is
// 0 even where resolve does not know the name. A user resolve cannot
// find is judged by name (and by number, if numeric); the driver refuses
// to run it anyway. A nil resolve judges by name only.
func (p Policy) Check(driver, user string, resolve Resolver) error {
	if user == "" || !slices.Contains(p.CheckedDrivers, driver) {
		return nil
	}
	if slices.Contains(p.Denylist, user) {
		return &DeniedError{User: user, Driver: driver}
	}
	if resolve == nil {
		return nil
	}
	uid, ok := -1, false
	if u, err := resolve(user); err == nil {
		uid, ok = u.UID, true
	} else if n, err := strconv.Atoi(user); err == nil && n >= 0 {
		uid, ok = n, true
	}
	if !ok {
		return nil
	}
	for _, d := range p.Denylist {
		if deniedUID(d, resolve) == uid {
			return &DeniedError{User: user, Driver: driver, UID: uid, Denied: d}
		}
	}
	return nil
}

// deniedUID is the uid a denylisted name stands for, or -1.
func deniedUID(name string, resolve Resolver) int {
	if u, err := resolve(name); err == nil {
		return u.UID
	}
	if name == "root" {
		return 0
	}
	if n, err := strconv.Atoi(name); err == nil && n >= 0 {
		return n
	}
	return -1
}

// User is a resolved account.
type User struct {
	Name     string
	UID, GID int
	// Groups are the supplementary gids, the primary one first; only
	// LookupFiles fills them in.
	Groups []int
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
