package command

import (
	"fmt"
	"strings"

	"github.com/drover-sched/drover/api"
)

// diffLine is one line of a rendered job diff before the marker column is
// sized: how deep it is nested, its marker ("+", "-", "+/-" or ""), and its
// text.
type diffLine struct {
	depth  int
	marker string
	text   string
}

// formatJobDiff renders a job diff the way `job plan` and `job history -p`
// show it:
//
//	+/- Job: "web"
//	+/- Task Group: "web" (2 create, 1 ignore)
//	  +/- Count: "1" => "3"
//	      Task: "server"
//
// Markers sit in a column of their own, so that names line up whatever the
// kind of change. Unchanged fields and blocks are shown only with verbose;
// groups and tasks are always shown, to give the changes their context.
func formatJobDiff(d *api.JobDiff, verbose bool) string {
	if d == nil {
		return ""
	}
	var lines []diffLine
	lines = append(lines, diffLine{0, marker(d.Type), fmt.Sprintf("Job: %q", d.ID)})
	lines = appendFields(lines, 0, d.Fields, verbose)
	lines = appendObjects(lines, 0, d.Objects, verbose)
	for _, tg := range d.TaskGroups {
		text := fmt.Sprintf("Task Group: %q", tg.Name)
		if u := formatUpdates(tg.Updates); u != "" {
			text += " (" + u + ")"
		}
		lines = append(lines, diffLine{0, marker(tg.Type), text})
		lines = appendFields(lines, 1, tg.Fields, verbose)
		lines = appendObjects(lines, 1, tg.Objects, verbose)
		for _, t := range tg.Tasks {
			text := fmt.Sprintf("Task: %q", t.Name)
			if len(t.Annotations) > 0 {
				text += " (" + strings.Join(t.Annotations, ", ") + ")"
			}
			lines = append(lines, diffLine{1, marker(t.Type), text})
			lines = appendFields(lines, 2, t.Fields, verbose)
			lines = appendObjects(lines, 2, t.Objects, verbose)
		}
	}
	return renderDiffLines(lines)
}

func renderDiffLines(lines []diffLine) string {
	width := 0
	for _, l := range lines {
		width = max(width, len(l.marker))
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.Repeat("  ", l.depth))
		if width > 0 {
			fmt.Fprintf(&b, "%-*s ", width, l.marker)
		}
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String()
}

func appendFields(lines []diffLine, depth int, fields []*api.FieldDiff, verbose bool) []diffLine {
	for _, f := range fields {
		if f.Type == api.DiffTypeNone && !verbose {
			continue
		}
		var text string
		switch f.Type {
		case api.DiffTypeAdded:
			text = fmt.Sprintf("%s: %q", f.Name, f.New)
		case api.DiffTypeDeleted:
			text = fmt.Sprintf("%s: %q", f.Name, f.Old)
		case api.DiffTypeEdited:
			text = fmt.Sprintf("%s: %q => %q", f.Name, f.Old, f.New)
		default:
			text = fmt.Sprintf("%s: %q", f.Name, f.New)
		}
		if len(f.Annotations) > 0 {
			text += " (" + strings.Join(f.Annotations, ", ") + ")"
		}
		lines = append(lines, diffLine{depth, marker(f.Type), text})
	}
	return lines
}

func appendObjects(lines []diffLine, depth int, objects []*api.ObjectDiff, verbose bool) []diffLine {
	for _, o := range objects {
		if o.Type == api.DiffTypeNone && !verbose {
			continue
		}
		lines = append(lines, diffLine{depth, marker(o.Type), o.Name + " {"})
		lines = appendFields(lines, depth+1, o.Fields, verbose)
		lines = appendObjects(lines, depth+1, o.Objects, verbose)
		lines = append(lines, diffLine{depth, "", "}"})
	}
	return lines
}

func marker(diffType string) string {
	switch diffType {
	case api.DiffTypeAdded:
		return "+"
	case api.DiffTypeDeleted:
		return "-"
	case api.DiffTypeEdited:
		return "+/-"
	}
	return ""
}

// formatUpdates renders a group's scheduler decisions, "1 create, 2
// in-place update", in a fixed order so the same plan reads the same.
func formatUpdates(u map[string]uint64) string {
	var parts []string
	for _, k := range sortedKeys(u) {
		if u[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", u[k], k))
		}
	}
	return strings.Join(parts, ", ")
}
