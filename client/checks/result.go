package checks

// Result statuses. success, failure and pending are Nomad's; warning is a
// script's exit code 1 (Consul's meaning), which check_restart's
// ignore_warnings and on_update = "ignore_warnings" do not count as a
// failure.
const (
	StatusSuccess = "success"
	StatusWarning = "warning"
	StatusFailure = "failure"
	StatusPending = "pending"
)

// Result is a check's latest outcome, in the shape of Nomad's
// AllocCheckStatus (GET /v1/client/allocation/:id/checks). Timestamp is
// in Unix seconds.
type Result struct {
	ID         string
	Check      string
	Group      string
	Mode       string
	Output     string
	Service    string
	Task       string
	Status     string
	StatusCode int
	Timestamp  int64
}

// outcome is what one probe found.
type outcome struct {
	status string
	code   int
	output string
}

// limitedBuffer keeps the first MaxOutput bytes written to it and
// discards the rest, so a chatty script or a large body costs no more.
type limitedBuffer struct {
	buf       []byte
	truncated bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := MaxOutput - len(b.buf); room > 0 {
		if len(p) > room {
			b.buf = append(b.buf, p[:room]...)
			b.truncated = true
		} else {
			b.buf = append(b.buf, p...)
		}
	} else if len(p) > 0 {
		b.truncated = true
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	if b.truncated {
		return string(b.buf) + " [output truncated]"
	}
	return string(b.buf)
}
