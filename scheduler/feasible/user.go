package feasible

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/drover-sched/drover/structs"
)

// Node attributes by which a client says which task users it refuses
// (the client options of the same names; see client/taskuser).
const (
	attrUserDenylist       = "user.denylist"
	attrUserCheckedDrivers = "user.checked_drivers"
)

// defaultTaskUser is the user a driver runs a task that names none as,
// where the scheduler can know it. Other drivers' defaults are the
// client's own user (raw_exec) or an image's (docker): the client checks
// those when it starts the task.
var defaultTaskUser = map[string]string{"exec": "nobody"}

// taskUser is one task's driver and the user it runs as.
type taskUser struct {
	driver, user string
}

// userChecker refuses a node whose client would refuse to run one of the
// group's tasks as its user: the driver is in the node's
// user.checked_drivers and the user in its user.denylist. A node that
// advertises neither (an older client) is not refused here.
type userChecker struct {
	tasks []taskUser
}

func newUserChecker(tg *structs.TaskGroup) (userChecker, bool) {
	var c userChecker
	for _, t := range tg.Tasks {
		user := t.User
		if user == "" {
			user = defaultTaskUser[t.Driver]
		}
		if user != "" {
			c.tasks = append(c.tasks, taskUser{driver: t.Driver, user: user})
		}
	}
	return c, len(c.tasks) > 0
}

func (c userChecker) check(node *structs.Node) string {
	deny, ok := node.Attributes.Get(attrUserDenylist)
	if !ok || deny == "" {
		return ""
	}
	checked := structs.SplitList(node.Attributes.Value(attrUserCheckedDrivers))
	denied := structs.SplitList(deny)
	for _, t := range c.tasks {
		if !slices.Contains(checked, t.driver) {
			continue
		}
		if slices.Contains(denied, t.user) {
			return fmt.Sprintf("user %q is in the node's user.denylist for driver %s", t.user, t.driver)
		}
		if d := deniedByWellKnownUID(t.user, denied); d != "" {
			return fmt.Sprintf("user %q is the uid of %q in the node's user.denylist for driver %s", t.user, d, t.driver)
		}
	}
	return ""
}

// wellKnownUID are the uids the scheduler knows a denylisted name by
// without the node's passwd.
var wellKnownUID = map[string]int{"root": 0}

// deniedByWellKnownUID is the denylisted name whose well-known uid a
// numeric user names ("0", "00" when root is denied), or "". Other names
// for a denied account (toor) are the client's to refuse: its user hook
// resolves every user as the driver will and denies by uid, and is the
// authority; this only spares a placement that would fail.
func deniedByWellKnownUID(user string, denied []string) string {
	n, err := strconv.Atoi(user)
	if err != nil {
		return ""
	}
	for _, d := range denied {
		if uid, ok := wellKnownUID[d]; ok && uid == n {
			return d
		}
	}
	return ""
}
