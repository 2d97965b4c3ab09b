package nomad

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestRaftMultiplierScalesTheLeadershipTimeouts(t *testing.T) {
	base := raft.DefaultConfig()
	for _, tc := range []struct {
		mult, want int
	}{{0, 1}, {1, 1}, {3, 3}, {10, 10}, {50, 10}} {
		conf := *base
		conf.LocalID = "s1"
		scaleRaftTimings(&conf, tc.mult)
		m := time.Duration(tc.want)
		if conf.HeartbeatTimeout != base.HeartbeatTimeout*m || conf.ElectionTimeout != base.ElectionTimeout*m ||
			conf.LeaderLeaseTimeout != base.LeaderLeaseTimeout*m {
			t.Errorf("multiplier %d: heartbeat %s, election %s, lease %s; want ×%d of %s, %s, %s", tc.mult,
				conf.HeartbeatTimeout, conf.ElectionTimeout, conf.LeaderLeaseTimeout, tc.want,
				base.HeartbeatTimeout, base.ElectionTimeout, base.LeaderLeaseTimeout)
		}
		if conf.CommitTimeout != base.CommitTimeout {
			t.Errorf("multiplier %d changed the commit timeout to %s", tc.mult, conf.CommitTimeout)
		}
		if err := raft.ValidateConfig(&conf); err != nil {
			t.Errorf("multiplier %d: raft refuses the scaled config: %v", tc.mult, err)
		}
	}
}
