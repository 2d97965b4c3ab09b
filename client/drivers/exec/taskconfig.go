package exec

import (
	"fmt"
	"path/filepath"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// checkNamespaceModes refuses pid_mode and ipc_mode other than private:
// a task always gets its own pid and ipc namespaces, and the host's are
// not offered (they would let it signal, ptrace or read the shared memory
// of every process on the node).
func checkNamespaceModes(cfg *drivers.TaskConfig) error {
	for _, key := range []string{structs.ExecConfigPIDMode, structs.ExecConfigIPCMode} {
		v, err := drivers.ConfigString(cfg.Config, key)
		if err != nil {
			return err
		}
		if v != "" && v != "private" {
			return fmt.Errorf("config %q: %q is not offered; exec tasks always get a private namespace (use \"private\" or leave it out)", key, v)
		}
	}
	return nil
}

// workDir is the task's working directory inside its root: work_dir when
// set (an absolute path inside the chroot; a host path of the task's
// directories is mapped), else the task dir, which is "/".
func workDir(cfg *drivers.TaskConfig) (string, error) {
	wd, err := drivers.ConfigString(cfg.Config, structs.DriverConfigWorkDir)
	if err != nil {
		return "", err
	}
	if wd != "" {
		wd = inTask(cfg, wd)
		if !filepath.IsAbs(wd) {
			return "", fmt.Errorf("config %q: %q is relative; use an absolute path inside the task's chroot, such as %q", structs.DriverConfigWorkDir, wd, drivers.TaskLocalDir)
		}
		return filepath.Clean(wd), nil
	}
	cwd := inTask(cfg, cfg.Dir)
	if !filepath.IsAbs(cwd) || cwd == cfg.Dir {
		cwd = "/"
	}
	return cwd, nil
}
