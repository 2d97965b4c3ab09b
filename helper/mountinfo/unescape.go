// Package mountinfo reads what the kernel writes in /proc/mounts and
// /proc/<pid>/mountinfo.
package mountinfo

import (
	"strconv"
	"strings"
)

// Unescape undoes the octal escapes the kernel writes for a space, tab,
// newline or backslash in a mount's device or path (\040 for a space).
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
