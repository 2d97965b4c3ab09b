package structs

import "strings"

// SplitList splits a comma-separated list the way client options and the
// node attributes that carry them to the scheduler (user.denylist,
// user.checked_drivers) hold lists: each item trimmed, blanks dropped,
// nil for none. The client and the scheduler must read them alike.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
