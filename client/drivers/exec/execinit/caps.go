package execinit

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// dropCaps shapes the capabilities the task will get at exec:
//
//   - the bounding set is cut to s.Caps, so no exec (a setuid binary, a
//     file with capabilities) can ever gain more;
//   - the inheritable set is s.Caps for a non-root task, which ambient
//     capabilities require, and empty for root (who gets the bounding set
//     at exec anyway).
//
// The init itself keeps its effective set: it is pid 1 and still needs
// to signal the task. The bounding set only limits what execs gain.
func dropCaps(s *Spec) error {
	keep := map[uint]bool{}
	for _, c := range s.Caps {
		keep[c] = true
	}
	last, err := lastCap()
	if err != nil {
		return err
	}
	for c := uint(0); c <= last; c++ {
		if keep[c] {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if s.Uid != 0 {
		for c := range keep {
			data[c/32].Inheritable |= 1 << (c % 32)
		}
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// lastCap is the highest capability the kernel knows.
func lastCap() (uint, error) {
	for c := uint(63); ; c-- {
		if _, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err == nil {
			return c, nil
		}
		if c == 0 {
			return 0, fmt.Errorf("no capability is known to the kernel")
		}
	}
}
