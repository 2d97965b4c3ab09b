package childproc

import (
	"bytes"
	"strings"
	"sync"
)

// cappedBuffer keeps at most max bytes and notes that more were written.
// It accepts (and drops) everything beyond, so the child never blocks on
// a full pipe. The buffer is a field, not embedded: an embedded
// bytes.Buffer would lend cappedBuffer its ReadFrom, which io.Copy (and
// so os/exec) prefers to Write, and the cap would never apply.
type cappedBuffer struct {
	buf      bytes.Buffer
	max      int
	overflow bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := b.max - b.buf.Len(); n > room {
		b.overflow = true
		p = p[:max(room, 0)]
	}
	b.buf.Write(p)
	return n, nil
}

// Bytes returns what was kept.
func (b *cappedBuffer) Bytes() []byte { return b.buf.Bytes() }

// String returns what was kept, as text.
func (b *cappedBuffer) String() string { return b.buf.String() }

// lastLine keeps the last complete line written to it: the child's most
// recent step. A line longer than a step may be is cut.
type lastLine struct {
	mu      sync.Mutex
	partial []byte
	done    string
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range p {
		if c == '\n' {
			l.done = string(l.partial)
			l.partial = l.partial[:0]
			continue
		}
		if len(l.partial) < maxStepLen {
			l.partial = append(l.partial, c)
		}
	}
	return len(p), nil
}

func (l *lastLine) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done
}

// firstParagraph is what a crashed Go program says about why, without
// the goroutine dumps that follow: its text up to the first blank line,
// on one line, cut to a few hundred bytes.
func firstParagraph(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "\n\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
