package docker

import (
	"testing"
)

// TestSysctlOutsideTheContainersNamespacesIsRefused: only the sysctls
// the kernel keeps per namespace (IPC's kernel.msg*, kernel.sem,
// kernel.shm*, fs.mqueue.*, and net.* in the task's own network) are the
// task's to set; the driver refuses the rest naming the key, before the
// daemon is asked, and net.* when the task shares another network.
func TestSysctlOutsideTheContainersNamespacesIsRefused(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	cases := []struct {
		name   string
		config map[string]any
		want   string
	}{
		{"a host-wide sysctl", map[string]any{"sysctl": map[string]any{"kernel.panic": "0"}}, `sysctl "kernel.panic" is not allowed`},
		{"vm", map[string]any{"sysctl": map[string]any{"vm.overcommit_memory": "1"}}, `sysctl "vm.overcommit_memory" is not allowed`},
		{"a prefix lookalike", map[string]any{"sysctl": map[string]any{"kernel.shm_next_id_x": "1", "kernel.semx": "1"}}, `sysctl "kernel.semx" is not allowed`},
		{"net in the host's network", map[string]any{"network_mode": "host", "sysctl": map[string]any{"net.core.somaxconn": "512"}}, `sysctl "net.core.somaxconn" is not allowed with network_mode "host"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			refusedStart(t, d, newTestTask(t, cli, withConfig(c.config)), c.want)
		})
	}
}
