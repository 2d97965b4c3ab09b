package feasible

import (
	"fmt"
	"slices"
	"strings"

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
	checked := splitList(node.Attributes.Value(attrUserCheckedDrivers))
	denied := splitList(deny)
	for _, t := range c.tasks {
		if slices.Contains(checked, t.driver) && slices.Contains(denied, t.user) {
			return fmt.Sprintf("user %q is in the node's user.denylist for driver %s", t.user, t.driver)
		}
	}
	return ""
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
