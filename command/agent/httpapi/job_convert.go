package httpapi

import (
	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/structs"
	"maps"
)

// ApiJobToStructJob converts a submitted job into the servers' form. It
// expects a canonicalized job (api.Job.Canonicalize has run), so pointers
// that defaults fill are set; any that are still nil become zero values.
//
// Every field the two types share is copied, including the Nomad features
// Drover keeps as data but does not act on (device requests, volume
// mounts, template change scripts, check details), so a job read back is
// the job submitted. The only api fields
// not copied are the job-level reschedule and migrate blocks, which
// Canonicalize has already merged into the groups (as in Nomad), the
// legacy LogConfig.Enabled (folded into Disabled) and Port.IgnoreCollision.
// The legacy group field prevent_reschedule_on_lost is folded into the
// disconnect block (replace = false), the one place the scheduler reads.
func ApiJobToStructJob(j *api.Job) *structs.Job {
	if j == nil {
		return nil
	}
	out := &structs.Job{
		Stop:              val(j.Stop),
		Region:            val(j.Region),
		Namespace:         val(j.Namespace),
		ID:                val(j.ID),
		ParentID:          val(j.ParentID),
		Name:              val(j.Name),
		Type:              val(j.Type),
		Priority:          val(j.Priority),
		AllAtOnce:         val(j.AllAtOnce),
		Datacenters:       cloneStrings(j.Datacenters),
		NodePool:          val(j.NodePool),
		Constraints:       convertConstraints(j.Constraints),
		Affinities:        convertAffinities(j.Affinities),
		Spreads:           convertSpreads(j.Spreads),
		Dispatched:        j.Dispatched,
		Payload:           append([]byte(nil), j.Payload...),
		Meta:              maps.Clone(j.Meta),
		Status:            val(j.Status),
		StatusDescription: val(j.StatusDescription),
		Stable:            val(j.Stable),
		Version:           val(j.Version),
		SubmitTime:        val(j.SubmitTime),
		CreateIndex:       val(j.CreateIndex),
		ModifyIndex:       val(j.ModifyIndex),
		JobModifyIndex:    val(j.JobModifyIndex),
	}
	if len(j.Payload) == 0 {
		out.Payload = nil
	}
	out.DispatchIdempotencyToken = val(j.DispatchIdempotencyToken)
	if u := convertUpdate(j.Update); u != nil {
		out.Update = *u
	}
	if p := j.Periodic; p != nil {
		out.Periodic = &structs.PeriodicConfig{
			Enabled:         val(p.Enabled),
			Spec:            val(p.Spec),
			Specs:           cloneStrings(p.Specs),
			SpecType:        val(p.SpecType),
			ProhibitOverlap: val(p.ProhibitOverlap),
			TimeZone:        val(p.TimeZone),
		}
	}
	if p := j.ParameterizedJob; p != nil {
		out.ParameterizedJob = &structs.ParameterizedJobConfig{
			Payload:      p.Payload,
			MetaRequired: cloneStrings(p.MetaRequired),
			MetaOptional: cloneStrings(p.MetaOptional),
		}
	}
	for _, tg := range j.TaskGroups {
		out.TaskGroups = append(out.TaskGroups, convertTaskGroup(tg))
	}
	return out
}

func convertTaskGroup(g *api.TaskGroup) *structs.TaskGroup {
	out := &structs.TaskGroup{
		Name:                      val(g.Name),
		Count:                     val(g.Count),
		Update:                    convertUpdate(g.Update),
		Constraints:               convertConstraints(g.Constraints),
		Affinities:                convertAffinities(g.Affinities),
		Spreads:                   convertSpreads(g.Spreads),
		Meta:                      maps.Clone(g.Meta),
		Networks:                  convertNetworks(g.Networks),
		Services:                  convertServices(g.Services),
		ShutdownDelay:             clonePtr(g.ShutdownDelay),
		StopAfterClientDisconnect: clonePtr(g.StopAfterClientDisconnect),
		MaxClientDisconnect:       clonePtr(g.MaxClientDisconnect),
		PreventRescheduleOnLost:   val(g.PreventRescheduleOnLost),
		RestartPolicy:             convertRestart(g.RestartPolicy),
	}
	if m := g.Migrate; m != nil {
		out.Migrate = &structs.MigrateStrategy{
			MaxParallel:     val(m.MaxParallel),
			HealthCheck:     val(m.HealthCheck),
			MinHealthyTime:  val(m.MinHealthyTime),
			HealthyDeadline: val(m.HealthyDeadline),
		}
	}
	if e := g.EphemeralDisk; e != nil {
		out.EphemeralDisk = &structs.EphemeralDisk{Sticky: val(e.Sticky), SizeMB: val(e.SizeMB), Migrate: val(e.Migrate)}
	}
	if r := g.ReschedulePolicy; r != nil {
		out.ReschedulePolicy = &structs.ReschedulePolicy{
			Attempts:      val(r.Attempts),
			Interval:      val(r.Interval),
			Delay:         val(r.Delay),
			DelayFunction: val(r.DelayFunction),
			MaxDelay:      val(r.MaxDelay),
			Unlimited:     val(r.Unlimited),
		}
	}
	if len(g.Volumes) > 0 {
		out.Volumes = make(map[string]*structs.VolumeRequest, len(g.Volumes))
		for k, v := range g.Volumes {
			vr := &structs.VolumeRequest{
				Name: v.Name, Type: v.Type, Source: v.Source, ReadOnly: v.ReadOnly,
				Sticky: v.Sticky, AccessMode: v.AccessMode, AttachmentMode: v.AttachmentMode, PerAlloc: v.PerAlloc,
			}
			if mo := v.MountOptions; mo != nil {
				vr.MountOptions = &structs.CSIMountOptions{FSType: mo.FSType, MountFlags: cloneStrings(mo.MountFlags)}
			}
			out.Volumes[k] = vr
		}
	}
	if d := g.Disconnect; d != nil {
		out.Disconnect = &structs.DisconnectStrategy{
			LostAfter:         val(d.LostAfter),
			Replace:           clonePtr(d.Replace),
			Reconcile:         val(d.Reconcile),
			StopOnClientAfter: clonePtr(d.StopOnClientAfter),
		}
	}
	if out.PreventRescheduleOnLost {
		if out.Disconnect == nil {
			out.Disconnect = &structs.DisconnectStrategy{}
		}
		if out.Disconnect.Replace == nil {
			out.Disconnect.Replace = structs.BoolPtr(false)
		}
	}
	out.Scaling = convertScaling(g.Scaling, out.Count)
	for _, t := range g.Tasks {
		out.Tasks = append(out.Tasks, convertTask(t))
	}
	return out
}

// convertScaling converts a group's scaling block as Nomad's agent does:
// enabled unless it says otherwise, a minimum of the group's count, and a
// maximum of -1 when none is given, which validation reports as missing.
func convertScaling(p *api.ScalingPolicy, count int) *structs.ScalingPolicy {
	if p == nil {
		return nil
	}
	out := &structs.ScalingPolicy{
		Type:    p.Type,
		Target:  maps.Clone(p.Target),
		Min:     int64(count),
		Max:     -1,
		Policy:  structs.CopyMapAny(p.Policy),
		Enabled: true,
	}
	if p.Min != nil {
		out.Min = *p.Min
	}
	if p.Max != nil {
		out.Max = *p.Max
	}
	if p.Enabled != nil {
		out.Enabled = *p.Enabled
	}
	return out
}

func convertTask(t *api.Task) *structs.Task {
	out := &structs.Task{
		Name:          t.Name,
		Driver:        t.Driver,
		User:          t.User,
		Config:        structs.CopyMapAny(t.Config),
		Env:           maps.Clone(t.Env),
		Services:      convertServices(t.Services),
		Constraints:   convertConstraints(t.Constraints),
		Affinities:    convertAffinities(t.Affinities),
		RestartPolicy: convertRestart(t.RestartPolicy),
		Meta:          maps.Clone(t.Meta),
		KillTimeout:   val(t.KillTimeout),
		Leader:        t.Leader,
		ShutdownDelay: t.ShutdownDelay,
		KillSignal:    t.KillSignal,
		Kind:          t.Kind,
	}
	if r := t.Resources; r != nil {
		out.Resources = &structs.Resources{
			CPU:         val(r.CPU),
			Cores:       val(r.Cores),
			MemoryMB:    val(r.MemoryMB),
			MemoryMaxMB: val(r.MemoryMaxMB),
			DiskMB:      val(r.DiskMB),
			Networks:    convertNetworks(r.Networks),
		}
		for _, d := range r.Devices {
			out.Resources.Devices = append(out.Resources.Devices, &structs.RequestedDevice{
				Name:        d.Name,
				Count:       val(d.Count),
				Constraints: convertConstraints(d.Constraints),
				Affinities:  convertAffinities(d.Affinities),
			})
		}
	}
	if l := t.LogConfig; l != nil {
		out.LogConfig = &structs.LogConfig{
			MaxFiles:      val(l.MaxFiles),
			MaxFileSizeMB: val(l.MaxFileSizeMB),
			Disabled:      val(l.Disabled),
		}
		// Enabled = false is the old spelling of Disabled = true.
		if l.Disabled == nil && l.Enabled != nil {
			out.LogConfig.Disabled = !*l.Enabled
		}
	}
	for _, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, &structs.TaskArtifact{
			GetterSource:   val(a.GetterSource),
			GetterOptions:  maps.Clone(a.GetterOptions),
			GetterHeaders:  maps.Clone(a.GetterHeaders),
			GetterMode:     val(a.GetterMode),
			GetterInsecure: val(a.GetterInsecure),
			RelativeDest:   val(a.RelativeDest),
			Chown:          a.Chown,
		})
	}
	for _, tm := range t.Templates {
		st := &structs.Template{
			SourcePath:    val(tm.SourcePath),
			DestPath:      val(tm.DestPath),
			EmbeddedTmpl:  val(tm.EmbeddedTmpl),
			ChangeMode:    val(tm.ChangeMode),
			ChangeSignal:  val(tm.ChangeSignal),
			Once:          val(tm.Once),
			Splay:         val(tm.Splay),
			Perms:         val(tm.Perms),
			Uid:           clonePtr(tm.Uid),
			Gid:           clonePtr(tm.Gid),
			LeftDelim:     val(tm.LeftDelim),
			RightDelim:    val(tm.RightDelim),
			Envvars:       val(tm.Envvars),
			ErrMissingKey: val(tm.ErrMissingKey),
		}
		if cs := tm.ChangeScript; cs != nil {
			st.ChangeScript = &structs.ChangeScript{
				Command:     val(cs.Command),
				Args:        cloneStrings(cs.Args),
				Timeout:     val(cs.Timeout),
				FailOnError: val(cs.FailOnError),
			}
		}
		if w := tm.Wait; w != nil {
			st.Wait = &structs.WaitConfig{Min: clonePtr(w.Min), Max: clonePtr(w.Max)}
		}
		out.Templates = append(out.Templates, st)
	}
	if d := t.DispatchPayload; d != nil {
		out.DispatchPayload = &structs.DispatchPayloadConfig{File: d.File}
	}
	for _, vm := range t.VolumeMounts {
		out.VolumeMounts = append(out.VolumeMounts, &structs.VolumeMount{
			Volume:          val(vm.Volume),
			Destination:     val(vm.Destination),
			ReadOnly:        val(vm.ReadOnly),
			PropagationMode: val(vm.PropagationMode),
			SELinuxLabel:    val(vm.SELinuxLabel),
		})
	}
	if l := t.Lifecycle; l != nil {
		out.Lifecycle = &structs.TaskLifecycleConfig{Hook: l.Hook, Sidecar: l.Sidecar}
	}
	return out
}

func convertUpdate(u *api.UpdateStrategy) *structs.UpdateStrategy {
	if u == nil {
		return nil
	}
	return &structs.UpdateStrategy{
		Stagger:          val(u.Stagger),
		MaxParallel:      val(u.MaxParallel),
		HealthCheck:      val(u.HealthCheck),
		MinHealthyTime:   val(u.MinHealthyTime),
		HealthyDeadline:  val(u.HealthyDeadline),
		ProgressDeadline: val(u.ProgressDeadline),
		AutoRevert:       val(u.AutoRevert),
		AutoPromote:      val(u.AutoPromote),
		Canary:           val(u.Canary),
	}
}

func convertRestart(r *api.RestartPolicy) *structs.RestartPolicy {
	if r == nil {
		return nil
	}
	return &structs.RestartPolicy{
		Attempts:        val(r.Attempts),
		Interval:        val(r.Interval),
		Delay:           val(r.Delay),
		Mode:            val(r.Mode),
		RenderTemplates: val(r.RenderTemplates),
	}
}

func convertConstraints(in []*api.Constraint) []*structs.Constraint {
	var out []*structs.Constraint
	for _, c := range in {
		out = append(out, &structs.Constraint{LTarget: c.LTarget, RTarget: c.RTarget, Operand: c.Operand})
	}
	return out
}

func convertAffinities(in []*api.Affinity) []*structs.Affinity {
	var out []*structs.Affinity
	for _, a := range in {
		out = append(out, &structs.Affinity{LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand, Weight: val(a.Weight)})
	}
	return out
}

func convertSpreads(in []*api.Spread) []*structs.Spread {
	var out []*structs.Spread
	for _, s := range in {
		sp := &structs.Spread{Attribute: s.Attribute, Weight: val(s.Weight)}
		for _, t := range s.SpreadTarget {
			sp.SpreadTarget = append(sp.SpreadTarget, &structs.SpreadTarget{Value: t.Value, Percent: t.Percent})
		}
		out = append(out, sp)
	}
	return out
}

func convertNetworks(in []*api.NetworkResource) structs.Networks {
	var out structs.Networks
	for _, n := range in {
		nr := &structs.NetworkResource{
			Mode:          n.Mode,
			Device:        n.Device,
			CIDR:          n.CIDR,
			IP:            n.IP,
			Hostname:      n.Hostname,
			MBits:         val(n.MBits),
			ReservedPorts: convertPorts(n.ReservedPorts),
			DynamicPorts:  convertPorts(n.DynamicPorts),
		}
		if d := n.DNS; d != nil {
			nr.DNS = &structs.DNSConfig{Servers: cloneStrings(d.Servers), Searches: cloneStrings(d.Searches), Options: cloneStrings(d.Options)}
		}
		out = append(out, nr)
	}
	return out
}

func convertPorts(in []api.Port) []structs.Port {
	var out []structs.Port
	for _, p := range in {
		out = append(out, structs.Port{Label: p.Label, Value: p.Value, To: p.To, HostNetwork: p.HostNetwork})
	}
	return out
}

func convertServices(in []*api.Service) []*structs.Service {
	var out []*structs.Service
	for _, s := range in {
		svc := &structs.Service{
			Name:              s.Name,
			TaskName:          s.TaskName,
			PortLabel:         s.PortLabel,
			Provider:          s.Provider,
			Tags:              cloneStrings(s.Tags),
			Meta:              maps.Clone(s.Meta),
			CanaryTags:        cloneStrings(s.CanaryTags),
			EnableTagOverride: s.EnableTagOverride,
			AddressMode:       s.AddressMode,
			Address:           s.Address,
			CheckRestart:      convertCheckRestart(s.CheckRestart),
			CanaryMeta:        maps.Clone(s.CanaryMeta),
			TaggedAddresses:   maps.Clone(s.TaggedAddresses),
			OnUpdate:          s.OnUpdate,
			Cluster:           s.Cluster,
			Kind:              s.Kind,
		}
		for _, c := range s.Checks {
			sc := &structs.ServiceCheck{
				Name:                   c.Name,
				Type:                   c.Type,
				Command:                c.Command,
				Args:                   cloneStrings(c.Args),
				Path:                   c.Path,
				Protocol:               c.Protocol,
				PortLabel:              c.PortLabel,
				Interval:               c.Interval,
				Timeout:                c.Timeout,
				Method:                 c.Method,
				Expose:                 c.Expose,
				AddressMode:            c.AddressMode,
				Advertise:              c.Advertise,
				InitialStatus:          c.InitialStatus,
				Notes:                  c.Notes,
				TLSServerName:          c.TLSServerName,
				TLSSkipVerify:          c.TLSSkipVerify,
				Body:                   c.Body,
				CheckRestart:           convertCheckRestart(c.CheckRestart),
				GRPCService:            c.GRPCService,
				GRPCUseTLS:             c.GRPCUseTLS,
				TaskName:               c.TaskName,
				SuccessBeforePassing:   c.SuccessBeforePassing,
				FailuresBeforeCritical: c.FailuresBeforeCritical,
				FailuresBeforeWarning:  c.FailuresBeforeWarning,
				OnUpdate:               c.OnUpdate,
			}
			if c.Header != nil {
				sc.Header = make(map[string][]string, len(c.Header))
				for k, v := range c.Header {
					sc.Header[k] = cloneStrings(v)
				}
			}
			svc.Checks = append(svc.Checks, sc)
		}
		out = append(out, svc)
	}
	return out
}

func convertCheckRestart(c *api.CheckRestart) *structs.CheckRestart {
	if c == nil {
		return nil
	}
	return &structs.CheckRestart{Limit: c.Limit, Grace: val(c.Grace), IgnoreWarnings: c.IgnoreWarnings}
}

// val dereferences an optional field, nil meaning the zero value.
func val[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s...)
}
