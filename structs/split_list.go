package structs

import "strings"

// SplitList splits a comma-separated list the way Drover reads them in
// client options, the node attributes that carry those to the scheduler
// (user.denylist, user.checked_drivers) and CLI flags: each item trimmed,
// blanks dropped, nil for none. The client and the scheduler must read
// the attributes alike.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
