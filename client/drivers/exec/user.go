package exec

import (
	"github.com/drover-sched/drover/client/taskuser"
)

// credentials are a task user's ids.
type credentials struct {
	Uid, Gid uint32
	Groups   []uint32
}

// lookupUser resolves name (or a numeric uid) against the passwd and
// group files the task's /etc is copied from (taskuser.LookupFiles), so
// that the driver, the task and the task runner, which owns the task's
// directories to the user, agree on who the user is.
func lookupUser(etc, name string) (credentials, error) {
	if etc == "" {
		return credentials{}, errNoEtc
	}
	u, err := taskuser.LookupFiles(etc, name)
	if err != nil {
		return credentials{}, err
	}
	c := credentials{Uid: uint32(u.UID), Gid: uint32(u.GID)}
	for _, g := range u.Groups {
		c.Groups = append(c.Groups, uint32(g))
	}
	return c, nil
}
