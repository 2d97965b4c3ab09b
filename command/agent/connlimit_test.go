package agent

import (
	"net"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

func TestConnLimiterGivesAnIdleConnectionsSlotToANewOne(t *testing.T) {
	l := newConnLimiter(func() int { return 1 }, func() int { return 100 }, hclog.NewNullLogger())
	a1, a2, other := fakeConn("10.0.0.1:1"), fakeConn("10.0.0.1:2"), fakeConn("10.0.0.2:1")
	if _, ok := l.admit(a1); !ok {
		t.Fatal("the first connection must be admitted")
	}
	if _, ok := l.admit(other); !ok {
		t.Fatal("another address has its own slots")
	}
	l.setIdle(a1, true)
	evicted, ok := l.admit(a2)
	if !ok || evicted != a1 {
		t.Fatalf("admit over the limit with an idle connection = %v, %v; want a1 evicted", evicted, ok)
	}
	if n := l.open("10.0.0.1"); n != 1 {
		t.Fatalf("%d slots counted, want 1", n)
	}
	l.release(a1) // its close arrives later and must not free a2's slot
	if n := l.open("10.0.0.1"); n != 1 {
		t.Fatalf("the evicted connection's close freed another's slot: %d counted", n)
	}
}

func TestConnLimiterLogsOncePerIntervalPerAddress(t *testing.T) {
	now := time.Unix(1000, 0)
	var logged []string
	l := newConnLimiter(func() int { return 1 }, func() int { return 100 }, nil)
	l.now = func() time.Time { return now }
	l.logger = recordingLogger(&logged)
	a1, a2 := fakeConn("10.0.0.1:1"), fakeConn("10.0.0.1:2")
	if _, ok := l.admit(a1); !ok {
		t.Fatal("the first connection must be admitted")
	}
	for i := 0; i < 5; i++ {
		if _, ok := l.admit(a2); ok {
			t.Fatal("a second connection must be refused")
		}
	}
	if len(logged) != 1 {
		t.Fatalf("refusals within a minute are logged once, got %d", len(logged))
	}
	now = now.Add(connLimitLogInterval)
	l.admit(a2)
	if len(logged) != 2 {
		t.Fatalf("a refusal a minute later is logged again, got %d", len(logged))
	}
	l.release(a1)
	if _, ok := l.admit(a2); !ok {
		t.Fatal("a released slot must be reusable")
	}
}

func TestConnLimiterBoundsEveryAddressTogether(t *testing.T) {
	l := newConnLimiter(func() int { return 10 }, func() int { return 2 }, hclog.NewNullLogger())
	a, b, c := fakeConn("10.0.0.1:1"), fakeConn("10.0.0.2:1"), fakeConn("10.0.0.3:1")
	for _, conn := range []net.Conn{a, b} {
		if _, ok := l.admit(conn); !ok {
			t.Fatal("connections within the total must be admitted")
		}
	}
	if _, ok := l.admit(c); ok {
		t.Fatal("a third connection while the total is busy must be refused")
	}
	l.setIdle(b, true)
	if evicted, ok := l.admit(c); !ok || evicted != b {
		t.Fatalf("over the total with another address's connection idle = %v, %v; want b evicted", evicted, ok)
	}
}

// lineWriter collects what a logger writes, a line at a time.
type lineWriter struct{ lines *[]string }

func (w lineWriter) Write(p []byte) (int, error) {
	*w.lines = append(*w.lines, string(p))
	return len(p), nil
}

func recordingLogger(lines *[]string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: lineWriter{lines}, Level: hclog.Warn})
}

// addrConn is a net.Conn that only has a remote address.
type addrConn struct {
	net.Conn
	remote net.Addr
}

func (c *addrConn) RemoteAddr() net.Addr { return c.remote }

func fakeConn(addr string) net.Conn {
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		panic(err)
	}
	return &addrConn{remote: a}
}
