package logmon

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// diskBytes sums the sizes of the stream's files in dir.
func diskBytes(t *testing.T, dir, base string) (total int64, files int) {
	t.Helper()
	for _, i := range Indexes(dir, base) {
		fi, err := os.Stat(filepath.Join(dir, base+"."+strconv.Itoa(i)))
		if err != nil {
			continue // rotated away between the listing and the stat
		}
		total += fi.Size()
		files++
	}
	return total, files
}

// The finding: `yes` wrote 1.56 GB to one log file in 2 s. A real `yes`
// writing as fast as it can into the task's FIFO leaves at most
// max_files × max_file_size on disk, at every moment it is sampled and
// at the end, and the newest file holds the end of the stream.
func TestLogsStayWithinMaxFilesTimesMaxFileSizeWhateverTheWriteRate(t *testing.T) {
	const (
		maxBytes = 256 << 10
		maxFiles = 3
		written  = 64 << 20 // 85 times the bound
		bound    = maxBytes * maxFiles
	)
	dir := t.TempDir()
	l, err := Open(dir, "web", maxBytes, maxFiles)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	w, err := os.OpenFile(l.StdoutPath(), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "yes | head -c "+strconv.Itoa(written)+"; printf END")
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	l.Start()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var peak int64
	samples := 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writer: %v", err)
			}
			running = false
		default:
		}
		total, _ := diskBytes(t, dir, "web.stdout")
		peak = max(peak, total)
		samples++
	}
	l.Wait()
	total, files := diskBytes(t, dir, "web.stdout")
	peak = max(peak, total)
	t.Logf("wrote %d bytes; peak on disk %d over %d samples; at the end %d bytes in %d files", written+3, peak, samples, total, files)
	if peak > bound {
		t.Fatalf("peak on disk %d bytes, over max_files × max_file_size = %d", peak, bound)
	}
	if files > maxFiles {
		t.Fatalf("%d files on disk, want at most %d", files, maxFiles)
	}
	idx := Indexes(dir, "web.stdout")
	var kept []byte
	for _, i := range idx {
		b, err := os.ReadFile(filepath.Join(dir, "web.stdout."+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, b...)
	}
	if !strings.HasSuffix(string(kept), "y\nEND") {
		t.Fatalf("the files kept must end with the stream's end, got ...%q", tail(kept))
	}
	if int64(len(idx)-1+idx[0])*maxBytes < written {
		t.Fatalf("files %v cannot have held the %d bytes written", idx, written)
	}
}

func tail(b []byte) []byte {
	if len(b) > 16 {
		return b[len(b)-16:]
	}
	return b
}

// A client restarted with a smaller max_files removes the files beyond it
// at once, not only at the next rotation.
func TestANewRotatorRemovesFilesBeyondMaxFiles(t *testing.T) {
	dir := t.TempDir()
	for i := range 6 {
		if err := os.WriteFile(filepath.Join(dir, "web.stdout."+strconv.Itoa(i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := NewRotator(dir, "web.stdout", 10, 2)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if idx := Indexes(dir, "web.stdout"); len(idx) != 2 || idx[0] != 4 || idx[1] != 5 {
		t.Fatalf("files %v, want [4 5]", idx)
	}
}
