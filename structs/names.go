package structs

import (
	"regexp"
	"strings"
	"unicode"
)

// The rules for the names users give jobs, groups and tasks. Each name ends
// up somewhere it must survive unchanged: a job ID in a URL path segment
// (/v1/job/<id>), a task name as a directory under the alloc dir. Go's HTTP
// router cleans "." and ".." out of a path, so a job with such an ID could
// be registered but never read or stopped again; a task named ".." or with
// a '/' would put its directory outside the allocation's. Control
// characters are refused everywhere: they survive nothing well, logs and
// terminals least.

// checkPathName returns why name cannot be used as a path segment, or "".
func checkPathName(name string) string {
	if name == "." || name == ".." {
		return `"." and ".." are path segments; choose another name`
	}
	return ""
}

// hasControl reports whether s holds a control character (NUL included).
func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// validateIDChars adds a problem to p if id, a job ID or a part of one,
// has a character a URL path segment or a log line cannot carry; what
// names it in the message ("job ID").
func validateIDChars(p problems, what, id string) bool {
	if !validJobID.MatchString(id) || hasControl(id) {
		p.add("%s %q must not contain spaces, control characters, '/', '?', '#' or '%%'", what, id)
		return false
	}
	return true
}

// validateJobID adds the problems of a job ID to p.
func validateJobID(p problems, id string) {
	if validateIDChars(p, "job ID", id) && checkPathName(id) != "" {
		p.add("job ID %q cannot be used: %s", id, checkPathName(id))
	}
}

// validateGroupName adds the problems of a group's name to p.
func validateGroupName(p problems, name string) {
	switch {
	case hasControl(name):
		p.add("group name %q must not contain control characters", name)
	case checkPathName(name) != "":
		p.add("group name %q cannot be used: %s", name, checkPathName(name))
	}
}

// reservedTaskNames are the names a task may not take because the
// allocation directory already uses them beside the task directories
// (client/allocdir): <alloc_id>/alloc is the directory every task of the
// allocation shares. A task called "alloc" would be given that directory
// as its own, its secrets/ would sit in the shared tree, readable by the
// group's other tasks and through `alloc fs` (which hides only
// <task>/secrets of real tasks). The names under alloc/ (data, logs, tmp)
// do not collide: task directories are siblings of alloc/, not children.
// The comparison ignores case, because a data dir on a case-insensitive
// file system (ext4 casefold, a mounted vfat) makes "Alloc" the same
// directory.
var reservedTaskNames = []string{"alloc"}

// MaxTaskNameLen bounds a task's name in bytes. The name becomes a
// directory and the stem of its log files and FIFOs in alloc/logs
// (".<task>.stderr.fifo", "<task>.stderr.<n>"); a file name longer than
// the kernel's 255-byte NAME_MAX cannot be created, so a longer task name
// would be accepted here and fail on every client.
const MaxTaskNameLen = 200

// validateTaskName adds the problems of a task's name to p: the name is
// the task's directory inside the allocation directory.
func validateTaskName(p problems, name string) {
	switch {
	case strings.ContainsAny(name, `/\`) || hasControl(name):
		p.add("task name %q must not contain '/', '\\' or control characters (it names the task's directory)", name)
	case checkPathName(name) != "":
		p.add("task name %q cannot be used: %s", name, checkPathName(name))
	case len(name) > MaxTaskNameLen:
		p.add("task name is %d bytes, longer than the %d allowed (it names the task's directory and log files)", len(name), MaxTaskNameLen)
	}
	for _, r := range reservedTaskNames {
		if strings.EqualFold(name, r) {
			p.add("task name %q is reserved: the allocation directory keeps the directory shared by all its tasks under %q; choose another name", name, r)
		}
	}
}

// validNamespace is Nomad's rule for a namespace name.
var validNamespace = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)

// validateNamespace adds a problem to p if ns cannot name the namespace a
// job lives in. Beyond Nomad's rule, the rule matters for access control:
// a request names every namespace with "*", and a token allowed a
// capability in any one namespace is allowed it in "*" (acl.AllNamespaces),
// so a job in a namespace called "*" would be open to every tenant. "" is
// the default namespace, filled in by Canonicalize.
func validateNamespace(p problems, ns string) {
	if ns != "" && !validNamespace.MatchString(ns) {
		p.add("namespace %q must be 1 to 128 letters, digits or '-' (\"*\" names every namespace in a request; no job can be in it)", ns)
	}
}
