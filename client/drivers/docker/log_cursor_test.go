package docker

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"
)

// A stream that starts again at the cursor skips exactly the entries
// copied before, those stamped at the cursor's time included, and none
// written after.
func TestLogCursorSkipsOnlyWhatWasCopied(t *testing.T) {
	t0 := time.Unix(100, 5)
	var cur logCursor
	for _, at := range []time.Time{t0.Add(-time.Second), t0, t0} {
		cur.advance(at)
	}
	if cur.At != t0 || cur.N != 2 {
		t.Fatalf("cursor = %+v, want two entries at %v", cur, t0)
	}
	seen := 0
	var kept []int
	stream := []time.Time{t0, t0, t0, t0.Add(1)}
	for i, at := range stream {
		if !cur.skips(at, &seen) {
			kept = append(kept, i)
		}
	}
	if len(kept) != 2 || kept[0] != 2 || kept[1] != 3 {
		t.Fatalf("entries kept = %v, want the third at the cursor's time and the later one", kept)
	}
	var zero logCursor
	if zero.skips(t0, &seen) {
		t.Fatal("the zero cursor skipped an entry")
	}
}

// The cursor file is read back for its container only.
func TestLogCursorFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	id := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	f, err := openCursorFile(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	want := logCursor{At: time.Unix(1700000000, 123456789), N: 3}
	if err := f.write(logCursor{At: time.Unix(1, 0), N: 1}); err != nil {
		t.Fatal(err)
	}
	if err := f.write(want); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, ok := readCursor(dir, id)
	if !ok || !got.At.Equal(want.At) || got.N != want.N {
		t.Fatalf("readCursor = %+v, %v; want %+v", got, ok, want)
	}
	if _, ok := readCursor(dir, "0123456789abffff0123456789abcdef0123456789abcdef0123456789abcdef"); ok {
		t.Fatal("a cursor was read for another container")
	}
	if _, ok := readCursor("", id); ok {
		t.Fatal("a cursor was read without a task directory")
	}
}

func frame(stream byte, payload string) []byte {
	hdr := make([]byte, 8)
	hdr[0] = stream
	binary.BigEndian.PutUint32(hdr[4:], uint32(len(payload)))
	return append(hdr, payload...)
}

// The frame reader splits the daemon's timestamped frames and refuses a
// stream cut short or without timestamps, rather than copying garbage.
func TestFrameReader(t *testing.T) {
	var in bytes.Buffer
	in.Write(frame(frameStdout, "2026-12-02T06:00:00.000000001Z hello\n"))
	in.Write(frame(frameStderr, "2026-12-02T06:00:00.000000002Z tail"))
	fr := &frameReader{r: &in}
	e, err := fr.next()
	if err != nil || e.stream != frameStdout || string(e.data) != "hello\n" || e.at.Nanosecond() != 1 {
		t.Fatalf("first entry = %+v, %v", e, err)
	}
	e, err = fr.next()
	if err != nil || e.stream != frameStderr || string(e.data) != "tail" || e.at.Nanosecond() != 2 {
		t.Fatalf("second entry = %+v, %v", e, err)
	}
	if _, err := fr.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("end = %v, want io.EOF", err)
	}
	cut := frame(frameStdout, "2026-12-02T06:00:00.000000001Z hello\n")
	if _, err := (&frameReader{r: bytes.NewReader(cut[:20])}).next(); err == nil || errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut frame = %v, want an unexpected EOF", err)
	}
	if _, err := (&frameReader{r: bytes.NewReader(frame(frameStdout, "no-timestamp"))}).next(); err == nil {
		t.Fatal("a frame without a timestamp was accepted")
	}
}
