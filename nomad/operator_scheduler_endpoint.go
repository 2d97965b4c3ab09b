package nomad

import (
	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// SchedulerGetConfiguration answers the cluster's scheduler configuration.
// It is a blocking query on the configuration's index; a cluster that
// never stored one answers the defaults at index 1. It needs operator
// read.
func (o *Operator) SchedulerGetConfiguration(args *structs.GenericRequest, reply *structs.SchedulerConfigurationResponse) error {
	if done, err := o.srv.forward("Operator.SchedulerGetConfiguration", args, args, reply); done {
		return err
	}
	if err := o.srv.allowOperator(args, false); err != nil {
		return err
	}
	return o.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		idx, cfg, err := st.SchedulerConfigWatch(ws)
		if err != nil {
			return 0, err
		}
		c := *cfg
		reply.SchedulerConfig = &c
		return idx, nil
	})
}

// SchedulerSetConfiguration replaces the scheduler configuration through
// raft, on the leader. An invalid configuration is refused before
// anything is written. With CAS, the write happens only if the stored
// configuration's ModifyIndex is still Config.ModifyIndex (0: none stored
// yet); the FSM decides, so two racing operators cannot both win, and the
// loser is answered Updated=false. Once applied, the leader's eval broker
// follows the new PauseEvalBroker at once. It needs operator write.
func (o *Operator) SchedulerSetConfiguration(args *structs.SchedulerSetConfigRequest, reply *structs.SchedulerSetConfigurationResponse) error {
	if done, err := o.srv.forward("Operator.SchedulerSetConfiguration", args, args, reply); done {
		return err
	}
	if err := o.srv.allowOperator(args, true); err != nil {
		return err
	}
	if err := args.Config.Validate(); err != nil {
		return errBadRequest("%v", err)
	}
	req := &structs.SchedulerSetConfigRequest{Config: args.Config, CAS: args.CAS, WriteRequest: args.WriteRequest}
	canonicalizeSchedulerConfig(&req.Config)
	req.Config.CreateIndex = 0
	if !req.CAS {
		req.Config.ModifyIndex = 0
	}
	idx, resp, err := o.srv.raftApply(structs.SchedulerConfigRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = idx
	reply.Updated = true
	if req.CAS {
		reply.Updated, _ = resp.(bool)
	}
	if reply.Updated {
		if err := o.srv.syncEvalBrokerPause(); err != nil {
			o.srv.Logger().Error("applying the eval broker pause of the new scheduler configuration failed", "error", err)
		}
	}
	return nil
}
