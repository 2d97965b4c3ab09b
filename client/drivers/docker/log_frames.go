package docker

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Stream numbers of the daemon's multiplexed log frames.
const (
	frameStdout = 1
	frameStderr = 2
)

// maxLogFrame bounds one frame's payload: the daemon sends one frame per
// log entry, and splits longer lines into entries of 16 KiB, so a bigger
// frame is a broken stream, not a line to buffer.
const maxLogFrame = 1 << 20

// logEntry is one timestamped entry of a container's output.
type logEntry struct {
	stream int
	at     time.Time
	data   []byte
}

// frameReader reads the multiplexed stream of a logs request made with
// timestamps: frames of an 8-byte header (stream, three zero bytes, a
// big-endian length) and a payload of one entry, "<RFC3339Nano> <data>".
type frameReader struct {
	r   io.Reader
	hdr [8]byte
	buf []byte
}

// next returns the next entry, io.EOF at the clean end of the stream.
func (fr *frameReader) next() (logEntry, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return logEntry{}, fmt.Errorf("log stream cut inside a frame header: %w", err)
		}
		return logEntry{}, err
	}
	size := binary.BigEndian.Uint32(fr.hdr[4:])
	if size > maxLogFrame {
		return logEntry{}, fmt.Errorf("log frame of %d bytes (at most %d expected)", size, maxLogFrame)
	}
	if cap(fr.buf) < int(size) {
		fr.buf = make([]byte, size)
	}
	fr.buf = fr.buf[:size]
	if _, err := io.ReadFull(fr.r, fr.buf); err != nil {
		return logEntry{}, fmt.Errorf("log stream cut inside a frame: %w", io.ErrUnexpectedEOF)
	}
	ts, data, ok := bytes.Cut(fr.buf, []byte{' '})
	if !ok {
		return logEntry{}, fmt.Errorf("log frame without a timestamp: %q", trimForError(fr.buf))
	}
	at, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return logEntry{}, fmt.Errorf("log frame timestamp: %w", err)
	}
	return logEntry{stream: int(fr.hdr[0]), at: at, data: data}, nil
}

func trimForError(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}
