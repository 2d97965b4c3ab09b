package command

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// shortIDLength is how much of a UUID the CLI shows by default: enough to
// be unique in any realistic cluster, and accepted back as a prefix.
const shortIDLength = 8

// shortID shortens id unless verbose output was asked for.
func shortID(id string, verbose bool) string {
	if verbose || len(id) <= shortIDLength {
		return id
	}
	return id[:shortIDLength]
}

// columns lays out rows of "|"-separated cells as aligned columns, two
// spaces apart, with the first row as the header.
func columns(rows []string) string {
	split := make([][]string, len(rows))
	var widths []int
	for i, r := range rows {
		cells := strings.Split(r, "|")
		split[i] = cells
		for j, c := range cells {
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], len([]rune(c)))
		}
	}
	var b strings.Builder
	for _, cells := range split {
		var line strings.Builder
		for j, c := range cells {
			if j == len(cells)-1 {
				line.WriteString(c)
				break
			}
			line.WriteString(c)
			line.WriteString(strings.Repeat(" ", widths[j]-len([]rune(c))+2))
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// keyValues lays out "Key|Value" rows as "Key  = Value" with the equals
// signs aligned, the form of every status command's header.
func keyValues(rows []string) string {
	width := 0
	for _, r := range rows {
		k, _, _ := strings.Cut(r, "|")
		width = max(width, len(k))
	}
	var b strings.Builder
	for _, r := range rows {
		k, v, _ := strings.Cut(r, "|")
		fmt.Fprintf(&b, "%-*s = %s\n", width, k, v)
	}
	return b.String()
}

// timeLayout is how absolute times are printed: RFC 3339, local zone.
const timeLayout = "2006-01-02T15:04:05Z07:00"

// formatTime prints t, or "N/A" for the zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "N/A"
	}
	return t.Local().Format(timeLayout)
}

// formatUnixNano prints a time stored as Unix nanoseconds.
func formatUnixNano(ns int64) string {
	if ns == 0 {
		return "N/A"
	}
	return formatTime(time.Unix(0, ns))
}

// relTime says how long ago (or how far ahead) t is from now, in at most
// two units: "1m5s ago", "3h12m ago", "in 25s". People scanning a table
// compare ages, not timestamps.
func relTime(t, now time.Time) string {
	if t.IsZero() {
		return "N/A"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + shortDuration(-d)
	}
	return shortDuration(d) + " ago"
}

// relUnixNano is relTime for a time stored as Unix nanoseconds.
func relUnixNano(ns int64, now time.Time) string {
	if ns == 0 {
		return "N/A"
	}
	return relTime(time.Unix(0, ns), now)
}

// shortDuration prints d rounded to seconds in its two largest units.
func shortDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d == 0 {
		return "0s"
	}
	units := []struct {
		name string
		size time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}}
	var parts []string
	for _, u := range units {
		if n := d / u.size; n > 0 {
			parts = append(parts, fmt.Sprintf("%d%s", n, u.name))
			d -= n * u.size
		} else if len(parts) > 0 {
			// A zero unit between two shown ones ends the output, so
			// "1h0m5s" reads as "1h" rather than skipping to seconds.
			break
		}
		if len(parts) == 2 {
			break
		}
	}
	return strings.Join(parts, "")
}

// formatMiB prints a size in MiB in the largest fitting binary unit.
func formatMiB(mb int64) string {
	switch {
	case mb >= 1024*1024:
		return fmt.Sprintf("%.1f TiB", float64(mb)/(1024*1024))
	case mb >= 1024:
		return fmt.Sprintf("%.1f GiB", float64(mb)/1024)
	}
	return fmt.Sprintf("%d MiB", mb)
}

// formatBytes prints a byte count in the largest fitting binary unit.
func formatBytes(b uint64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := uint64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}

// orNone prints "<none>" for an empty string, as Nomad does for unset
// fields, so a blank cell is never ambiguous.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// plural returns "1 node", "3 nodes".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// sortedKeys returns a map's keys in order, for stable output.
func sortedKeys[M ~map[string]V, V any](m M) []string { return slices.Sorted(maps.Keys(m)) }

// deref dereferences an optional field of a job: the zero value when it
// is unset.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
