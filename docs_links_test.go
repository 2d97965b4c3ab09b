package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// The README and docs/ are the project's map: a link in them that points
// at a file that moved, or at a heading that was renamed, sends a reader
// nowhere. TestDocLinks keeps every relative link pointing at something
// that exists in the repository.

var (
	// inlineLink matches [text](target) and [text](target "title").
	inlineLink = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// refLink matches a reference definition: [name]: target
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	heading    = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	hasScheme  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	fenceStart = regexp.MustCompile("^\\s*(```|~~~)")
)

func TestDocLinks(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"README.md"}, files...)
	problems, links := checkDocLinks(".", files)
	for _, p := range problems {
		t.Error(p)
	}
	// A parser that stopped seeing links would pass silently: the README
	// alone links to every file in docs/.
	if links < len(files) {
		t.Errorf("found %d relative links in %d files; the link parser is broken", links, len(files))
	}
}

func TestDocLinksCatchesBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", strings.Join([]string{
		"# Top",
		"## Run `drover nodesim`: a fleet",
		"## Twice",
		"## Twice",
		"[ok](docs/a.md) [ok](docs/a.md#section-one) [ok](#run-drover-nodesim-a-fleet)",
		"[ok](#twice-1) [ok](docs/) [ok](https://example.com/x.md) [ok](mailto:a@b)",
		"[missing file](docs/gone.md)",
		"[missing anchor](docs/a.md#no-such-heading)",
		"[outside](../shared/DESIGN.md)",
		"[anchor on a non-markdown file](main.go#L3)",
		"`[in a code span](docs/gone2.md)`",
		"```",
		"[in a fence](docs/gone3.md)",
		"```",
		"[ref]: docs/gone4.md",
		"",
	}, "\n"))
	write("docs/a.md", "# A\n\n## Section one\n\n[back](../README.md#top) [bad back](../README.md#twice-2)\n")
	write("main.go", "package main\n")
	write("../shared/DESIGN.md", "# Design\n")

	problems, links := checkDocLinks(root, []string{"README.md", "docs/a.md"})
	got := strings.Join(problems, "\n")
	want := []string{
		"README.md:7: docs/gone.md:",
		"README.md:8: docs/a.md#no-such-heading: no heading",
		"README.md:9: ../shared/DESIGN.md: outside the repository",
		"README.md:10: main.go#L3: an anchor needs a markdown file",
		"README.md:15: docs/gone4.md:",
		"docs/a.md:5: ../README.md#twice-2: no heading",
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("problems do not report %q; got:\n%s", w, got)
		}
	}
	if len(problems) != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", len(problems), len(want), got)
	}
	if strings.Contains(got, "gone2") || strings.Contains(got, "gone3") {
		t.Errorf("links in code are not links:\n%s", got)
	}
	if links != 12 {
		t.Errorf("checked %d links, want 12", links)
	}
}

// checkDocLinks checks every relative link of the markdown files (paths
// relative to root) and returns a line per broken one and how many relative
// links it checked.
func checkDocLinks(root string, files []string) (problems []string, links int) {
	anchors := map[string]map[string]bool{} // file (relative to root) -> heading slugs
	anchorsOf := func(rel string) (map[string]bool, error) {
		if a, ok := anchors[rel]; ok {
			return a, nil
		}
		text, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		a := headingSlugs(string(text))
		anchors[rel] = a
		return a, nil
	}
	for _, file := range files {
		text, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, l := range markdownLinks(string(text)) {
			links++
			if msg := checkLink(root, file, l.target, anchorsOf); msg != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", file, l.line, l.target, msg))
			}
		}
	}
	sort.Strings(problems)
	return problems, links
}

// checkLink says what is wrong with one link target of file, or "".
func checkLink(root, file, target string, anchorsOf func(string) (map[string]bool, error)) string {
	path, anchor, _ := strings.Cut(target, "#")
	rel := file
	if path != "" {
		rel = filepath.Clean(filepath.Join(filepath.Dir(file), filepath.FromSlash(path)))
		if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(path) {
			return "outside the repository; link to a file in it"
		}
		info, err := os.Stat(filepath.Join(root, rel))
		if err != nil {
			return fmt.Sprintf("%v; link to a file that exists", err)
		}
		if anchor != "" && (info.IsDir() || !strings.HasSuffix(rel, ".md")) {
			return "an anchor needs a markdown file with that heading"
		}
	}
	if anchor == "" {
		return ""
	}
	slugs, err := anchorsOf(rel)
	if err != nil {
		return err.Error()
	}
	if !slugs[anchor] {
		return fmt.Sprintf("no heading in %s has the anchor #%s", filepath.ToSlash(rel), anchor)
	}
	return ""
}

type markdownLink struct {
	line   int
	target string
}

// markdownLinks returns the relative link targets of a markdown text,
// leaving out links inside code (fenced blocks and code spans) and links
// with a scheme (https:, mailto:), which this test cannot check offline.
func markdownLinks(text string) []markdownLink {
	var out []markdownLink
	forEachProseLine(text, func(n int, line string) {
		line = codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, t := range targets {
			t = strings.Trim(t, "<>")
			if !hasScheme.MatchString(t) {
				out = append(out, markdownLink{line: n, target: t})
			}
		}
	})
	return out
}

// headingSlugs returns the anchors GitHub gives a text's headings: lower
// case, punctuation dropped, spaces as hyphens, and -1, -2, ... on repeats.
func headingSlugs(text string) map[string]bool {
	slugs := map[string]bool{}
	seen := map[string]int{}
	forEachProseLine(text, func(_ int, line string) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			return
		}
		slug := githubSlug(m[2])
		if n := seen[slug]; n > 0 {
			slugs[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			slugs[slug] = true
		}
		seen[slug]++
	})
	return slugs
}

func githubSlug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// forEachProseLine calls fn with each line (numbered from 1) that is not
// inside a fenced code block.
func forEachProseLine(text string, fn func(n int, line string)) {
	var fence string
	for i, line := range strings.Split(text, "\n") {
		if m := fenceStart.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
				continue
			case m[1] == fence:
				fence = ""
				continue
			}
		}
		if fence == "" {
			fn(i+1, line)
		}
	}
}
