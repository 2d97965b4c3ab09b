package network

import (
	"net"
	"os/exec"
	"testing"
)

// freePort returns a TCP port nothing on the host listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// inNS runs a command in the namespace at path.
func inNS(t *testing.T, path string, args ...string) string {
	t.Helper()
	out, err := exec.Command("nsenter", append([]string{"--net=" + path}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v in %s: %v: %s", args, path, err, out)
	}
	return string(out)
}
