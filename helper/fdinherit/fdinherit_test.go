package fdinherit

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A descriptor left inheritable (as a parent shell's would be) no longer
// reaches a child after CloseOnExec, and the process can still use it.
func TestInheritedDescriptorStopsAtTheNextExec(t *testing.T) {
	fd, err := unix.Open(os.DevNull, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	name := "/proc/self/fd/" + strconv.Itoa(fd)
	if !childSees(t, name) {
		t.Fatalf("a child does not see fd %d before the mark; the test shows nothing", fd)
	}
	CloseOnExec()
	if childSees(t, name) {
		t.Errorf("a child still inherits fd %d", fd)
	}
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("fd %d: flags %d, %v; want open and close-on-exec", fd, flags, err)
	}
}

func childSees(t *testing.T, path string) bool {
	t.Helper()
	out, err := exec.Command("sh", "-c", "test -e "+path+" && echo yes || echo no").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out)) == "yes"
}
