package fingerprint

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// osRelease reads ID and VERSION_ID from /etc/os-release.
func osRelease() (name, version string) {
	f, err := os.Open(filepath.Join(etcRoot, "os-release"))
	if err != nil {
		return runtime.GOOS, ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"'`)
		switch k {
		case "ID":
			name = v
		case "VERSION_ID":
			version = v
		}
	}
	if name == "" {
		name = runtime.GOOS
	}
	return name, version
}

// kernel returns the kernel name ("linux"), release and machine.
func kernel() (name, version, arch string) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return runtime.GOOS, "", runtime.GOARCH
	}
	return strings.ToLower(unix.ByteSliceToString(u.Sysname[:])), unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Machine[:])
}
