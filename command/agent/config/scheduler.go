package config

import (
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/structs"
)

// decodeDefaultSchedulerConfig reads the server block's
// default_scheduler_config, Nomad's spelling:
//
//	default_scheduler_config {
//	  scheduler_algorithm             = "spread"
//	  memory_oversubscription_enabled = true
//	  reject_job_registration         = false
//	  pause_eval_broker               = false
//	  preemption_config {
//	    system_scheduler_enabled   = true
//	    sysbatch_scheduler_enabled = false
//	    batch_scheduler_enabled    = false
//	    service_scheduler_enabled  = false
//	  }
//	}
//
// A key left out keeps Nomad's default (binpack, preemption for system
// jobs only), so a block that only picks the algorithm does not also
// switch system preemption off. The leader stores this configuration once,
// when the cluster has none; after that only the operator API changes it.
func (d *decoder) decodeDefaultSchedulerConfig(body hcl.Body, dst **structs.SchedulerConfiguration) {
	const path = "server.default_scheduler_config"
	cfg := structs.DefaultSchedulerConfig()
	p := &cfg.PreemptionConfig
	d.walk(body, &section{
		path: path,
		attrs: map[string]attrFunc{
			"scheduler_algorithm":             oneOfAttr(&cfg.SchedulerAlgorithm, structs.SchedulerAlgorithmBinpack, structs.SchedulerAlgorithmSpread),
			"memory_oversubscription_enabled": boolAttr(&cfg.MemoryOversubscriptionEnabled),
			"reject_job_registration":         boolAttr(&cfg.RejectJobRegistration),
			"pause_eval_broker":               boolAttr(&cfg.PauseEvalBroker),
		},
		blocks: map[string]blockSpec{
			"preemption_config": {decode: func(d *decoder, b *hcl.Block) {
				d.walk(b.Body, &section{
					path: path + ".preemption_config",
					attrs: map[string]attrFunc{
						"system_scheduler_enabled":   boolAttr(&p.SystemSchedulerEnabled),
						"sysbatch_scheduler_enabled": boolAttr(&p.SysBatchSchedulerEnabled),
						"batch_scheduler_enabled":    boolAttr(&p.BatchSchedulerEnabled),
						"service_scheduler_enabled":  boolAttr(&p.ServiceSchedulerEnabled),
					},
				})
			}},
		},
	})
	cfg.SchedulerAlgorithm = strings.ToLower(cfg.SchedulerAlgorithm)
	*dst = cfg
}

// copySchedulerConfig copies a configuration pointer, so merged and
// reloaded agent configurations never share one.
func copySchedulerConfig(c *structs.SchedulerConfiguration) *structs.SchedulerConfiguration {
	if c == nil {
		return nil
	}
	out := *c
	return &out
}
