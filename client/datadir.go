package client

import (
	"fmt"
	"os"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/helper/dirperm"
)

// ensureDataDirs sets the modes of the client's directories at every
// start, tightening any that an older version or an operator left looser:
//
//	<data_dir>          0711  a task's user passes through, cannot list
//	<data_dir>/alloc    0711  idem: no task lists the node's allocs
//	<data_dir>/client   0700  the state DB and the node's secret ID
//
// A task run as another user (exec's nobody) must reach its own alloc dir
// through the first two; it must never reach the third.
func ensureDataDirs(cfg *config.Config) error {
	for _, d := range []struct {
		dir  string
		mode os.FileMode
	}{{cfg.DataDir, dirperm.Traverse}, {cfg.AllocDir(), dirperm.Traverse}, {cfg.StateDir(), dirperm.Private}} {
		if err := dirperm.Ensure(d.dir, d.mode); err != nil {
			return fmt.Errorf("client: data_dir: %w", err)
		}
	}
	return nil
}
