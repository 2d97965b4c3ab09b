package config

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestDefaultSchedulerConfigBlock(t *testing.T) {
	cases := []struct {
		name, src string
		want      structs.SchedulerConfiguration
	}{
		{
			name: "every key, Nomad's spelling",
			src: `server {
  default_scheduler_config {
    scheduler_algorithm             = "spread"
    memory_oversubscription_enabled = true
    reject_job_registration         = true
    pause_eval_broker               = true
    preemption_config {
      batch_scheduler_enabled    = true
      system_scheduler_enabled   = false
      service_scheduler_enabled  = true
      sysbatch_scheduler_enabled = true
    }
  }
}
`,
			want: structs.SchedulerConfiguration{SchedulerAlgorithm: "spread", MemoryOversubscriptionEnabled: true,
				RejectJobRegistration: true, PauseEvalBroker: true, PreemptionConfig: structs.PreemptionConfig{
					BatchSchedulerEnabled: true, ServiceSchedulerEnabled: true, SysBatchSchedulerEnabled: true}},
		},
		{
			name: "keys left out keep Nomad's defaults",
			src:  "server {\n  default_scheduler_config {\n    scheduler_algorithm = \"Spread\"\n  }\n}\n",
			want: structs.SchedulerConfiguration{SchedulerAlgorithm: "spread",
				PreemptionConfig: structs.PreemptionConfig{SystemSchedulerEnabled: true}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, warnings, err := Parse("agent.hcl", []byte(tc.src))
			if err != nil || len(warnings) != 0 {
				t.Fatalf("parse: %v %q", err, warnings)
			}
			requireEqual(t, &tc.want, c.Server.DefaultSchedulerConfig)
			s, err := Default().Merge(c).ForServer(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			requireEqual(t, &tc.want, s.DefaultSchedulerConfig)
		})
	}

	t.Run("a bad value names the key and its position", func(t *testing.T) {
		_, _, err := Parse("agent.hcl", []byte("server {\n  default_scheduler_config {\n    scheduler_algorithm = \"fifo\"\n    pause_eval_broker = \"soon\"\n  }\n}\n"))
		for _, want := range []string{
			`agent.hcl:3:27: server.default_scheduler_config.scheduler_algorithm: expected one of binpack, spread, got "fifo"`,
			`agent.hcl:4:25: server.default_scheduler_config.pause_eval_broker: expected true or false`,
		} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v\nshould contain %q", err, want)
			}
		}
	})

	t.Run("a later file's block replaces an earlier one whole", func(t *testing.T) {
		a, _, err := Parse("a.hcl", []byte("server {\n  default_scheduler_config {\n    pause_eval_broker = true\n  }\n}\n"))
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := Parse("b.hcl", []byte("server {\n  default_scheduler_config {\n    scheduler_algorithm = \"spread\"\n  }\n}\n"))
		if err != nil {
			t.Fatal(err)
		}
		merged := Default().Merge(a).Merge(b)
		want := &structs.SchedulerConfiguration{SchedulerAlgorithm: "spread", PreemptionConfig: structs.PreemptionConfig{SystemSchedulerEnabled: true}}
		requireEqual(t, want, merged.Server.DefaultSchedulerConfig)
		if merged.Copy().Server.DefaultSchedulerConfig == merged.Server.DefaultSchedulerConfig {
			t.Fatal("a copied configuration must not share the block")
		}
		if Default().Merge(a).Merge(&Config{}).Server.DefaultSchedulerConfig.PauseEvalBroker != true {
			t.Fatal("a file without the block must keep the earlier one")
		}
	})
}
