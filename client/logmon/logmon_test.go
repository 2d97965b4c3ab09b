package logmon

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
)

func TestRotatorSplitsAndKeepsNewestFiles(t *testing.T) {
	dir := t.TempDir()
	r, err := NewRotator(dir, "web.stdout", 10, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Write([]byte(strings.Repeat("a", 25) + strings.Repeat("b", 20))); err != nil {
		t.Fatal(err)
	}
	r.Close()
	idx := Indexes(dir, "web.stdout")
	if len(idx) != 3 || idx[0] != 2 || idx[2] != 4 {
		t.Fatalf("files %v, want 2..4", idx)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "web.stdout.4"))
	if string(b) != "bbbbb" {
		t.Fatalf("newest file %q", b)
	}
	// A new rotator (restarted client) continues the newest file.
	r2, _ := NewRotator(dir, "web.stdout", 10, 3)
	r2.Write([]byte("cc"))
	r2.Close()
	b, _ = os.ReadFile(filepath.Join(dir, "web.stdout.4"))
	if string(b) != "bbbbbcc" {
		t.Fatalf("continued file %q", b)
	}
}

func TestTaskLoggerCopiesFIFOIntoFiles(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, "web", 1<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range []string{"first\n", "second\n"} {
		w, err := os.OpenFile(l.StdoutPath(), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		l.Start()
		w.WriteString(line)
		w.Close()
		l.Wait()
		b, _ := os.ReadFile(filepath.Join(dir, "web.stdout.0"))
		if want := []string{"first\n", "first\nsecond\n"}[i]; string(b) != want {
			t.Fatalf("attempt %d: %q", i, b)
		}
	}
	l.Close()
}

func writeFiles(t *testing.T, dir string, contents ...string) {
	for i, c := range contents {
		if err := os.WriteFile(filepath.Join(dir, "web.stdout."+string(rune('0'+i))), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReaderOffsetsAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "0123", "4567", "89")
	cases := []struct {
		name   string
		origin string
		offset int64
		want   string
	}{
		{"from the start", OriginStart, 0, "0123456789"},
		{"from the start skipping into the second file", OriginStart, 5, "56789"},
		{"the last three bytes", OriginEnd, 3, "789"},
		{"an offset past the start clamps", OriginEnd, 100, "0123456789"},
		{"an offset past the end reads nothing", OriginStart, 100, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewReader(dir, "web", Stdout, ReaderOptions{Origin: c.origin, Offset: c.offset})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			b, _ := io.ReadAll(r)
			if string(b) != c.want {
				t.Fatalf("got %q, want %q", b, c.want)
			}
		})
	}
}

func TestFollowingReaderSeesNewFilesUntilDone(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "ab")
	clk := clock.NewFake(time.Time{})
	var done atomic.Bool
	r, err := NewReader(dir, "web", Stdout, ReaderOptions{Follow: true, Clock: clk, Done: done.Load})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() { b, _ := io.ReadAll(r); got <- string(b) }()
	if !clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("reader did not wait for more output")
	}
	writeFiles(t, dir, "abc", "de")
	done.Store(true)
	testutil.WaitForWhile(t, "reader to finish", func() bool { return clk.Pending() == 0 }, func() { clk.Advance(time.Second) })
	if s := <-got; s != "abcde" {
		t.Fatalf("followed %q", s)
	}
}
