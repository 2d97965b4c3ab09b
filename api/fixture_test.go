package api

import "time"

// fullJob returns a job that sets every field Drover models, with values
// that differ from the defaults, so that round-trip and canonicalization
// tests notice a field that is dropped or overwritten.
func fullJob() *Job {
	return &Job{
		Region:      new("eu"),
		Namespace:   new("team-a"),
		ID:          new("web"),
		Name:        new("web-name"),
		Type:        new(JobTypeService),
		Priority:    new(70),
		AllAtOnce:   new(true),
		Datacenters: []string{"dc1", "dc2"},
		NodePool:    new("pool-a"),
		Constraints: []*Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}},
		Affinities:  []*Affinity{{LTarget: "${node.class}", RTarget: "fast", Operand: "=", Weight: new(int8(-20))}},
		Spreads: []*Spread{{Attribute: "${node.datacenter}", Weight: new(int8(30)),
			SpreadTarget: []*SpreadTarget{{Value: "dc1", Percent: 70}, {Value: "dc2", Percent: 30}}}},
		Update: &UpdateStrategy{
			Stagger: new(time.Second), MaxParallel: new(2), HealthCheck: new("task_states"),
			MinHealthyTime: new(3 * time.Second), HealthyDeadline: new(time.Minute),
			ProgressDeadline: new(2 * time.Minute), Canary: new(1), AutoRevert: new(true), AutoPromote: new(true),
		},
		Periodic: &PeriodicConfig{Enabled: new(true), Specs: []string{"*/5 * * * *"},
			SpecType: new("cron"), ProhibitOverlap: new(true), TimeZone: new("Europe/Berlin")},
		ParameterizedJob: &ParameterizedJobConfig{Payload: "required", MetaRequired: []string{"a"}, MetaOptional: []string{"b"}},
		Reschedule:       &ReschedulePolicy{Attempts: new(4)},
		Migrate:          &MigrateStrategy{MaxParallel: new(3)},
		Meta:             map[string]string{"owner": "ops"},

		Stop:                     new(false),
		ParentID:                 new("parent"),
		Dispatched:               true,
		DispatchIdempotencyToken: new("tok"),
		Payload:                  []byte("payload"),
		Status:                   new("running"),
		StatusDescription:        new("ok"),
		Stable:                   new(true),
		Version:                  new(uint64(3)),
		SubmitTime:               new(int64(1700000000)),
		CreateIndex:              new(uint64(10)),
		ModifyIndex:              new(uint64(11)),
		JobModifyIndex:           new(uint64(12)),
		TaskGroups:               []*TaskGroup{fullGroup()},
	}
}

func fullGroup() *TaskGroup {
	return &TaskGroup{
		Name:        new("web"),
		Count:       new(3),
		Constraints: []*Constraint{{Operand: ConstraintDistinctHosts, RTarget: "true"}},
		Affinities:  []*Affinity{{LTarget: "${meta.rack}", RTarget: "r1", Operand: "=", Weight: new(int8(10))}},
		Spreads:     []*Spread{{Attribute: "${meta.rack}"}},
		Volumes: map[string]*VolumeRequest{"data": {Name: "data", Type: "host", Source: "data", ReadOnly: true,
			Sticky: true, AccessMode: "single-node-writer", AttachmentMode: "file-system",
			MountOptions: &CSIMountOptions{FSType: "ext4", MountFlags: []string{"noatime"}}, PerAlloc: true}},
		RestartPolicy: &RestartPolicy{Attempts: new(5), Interval: new(time.Minute), Delay: new(time.Second),
			Mode: new("delay"), RenderTemplates: new(true)},
		Disconnect: &DisconnectStrategy{LostAfter: new(time.Hour), StopOnClientAfter: new(time.Minute),
			Replace: new(false), Reconcile: new(ReconcileOptionKeepOriginal)},
		ReschedulePolicy: &ReschedulePolicy{Attempts: new(2), Interval: new(time.Hour), Delay: new(time.Second),
			DelayFunction: new("fibonacci"), MaxDelay: new(time.Minute), Unlimited: new(false)},
		EphemeralDisk: &EphemeralDisk{Sticky: new(true), Migrate: new(true), SizeMB: new(500)},
		Update:        &UpdateStrategy{Canary: new(2)},
		Migrate:       &MigrateStrategy{HealthCheck: new("task_states"), MinHealthyTime: new(time.Second), HealthyDeadline: new(time.Minute)},
		Networks: []*NetworkResource{{
			Mode: "bridge", Device: "eth0", CIDR: "10.0.0.0/8", IP: "10.0.0.1", Hostname: "web",
			DNS:           &DNSConfig{Servers: []string{"1.1.1.1"}, Searches: []string{"local"}, Options: []string{"ndots:2"}},
			ReservedPorts: []Port{{Label: "admin", Value: 9000, To: 9000, HostNetwork: "private", IgnoreCollision: true}},
			DynamicPorts:  []Port{{Label: "http", To: 8080}},
			MBits:         new(10),
		}},
		Meta:                      map[string]string{"tier": "front"},
		Services:                  []*Service{fullService()},
		ShutdownDelay:             new(5 * time.Second),
		MaxClientDisconnect:       new(time.Hour),
		StopAfterClientDisconnect: new(time.Minute),
		PreventRescheduleOnLost:   new(true),
		Tasks:                     []*Task{fullTask()},
	}
}

func fullService() *Service {
	return &Service{
		Name: "web", Tags: []string{"a"}, CanaryTags: []string{"c"}, EnableTagOverride: true,
		PortLabel: "http", AddressMode: "host", Address: "1.2.3.4",
		Checks: []ServiceCheck{{
			Name: "alive", Type: "http", Command: "/bin/check", Args: []string{"-v"}, Path: "/health",
			Protocol: "https", PortLabel: "http", Expose: true, AddressMode: "driver", Advertise: "1.2.3.4",
			Interval: 10 * time.Second, Timeout: 2 * time.Second, InitialStatus: "passing", Notes: "n",
			TLSServerName: "web.local", TLSSkipVerify: true, Header: map[string][]string{"X-A": {"1", "2"}},
			Method: "POST", CheckRestart: &CheckRestart{Limit: 3, Grace: new(time.Second), IgnoreWarnings: true},
			GRPCService: "svc", GRPCUseTLS: true, TaskName: "server", SuccessBeforePassing: 2,
			FailuresBeforeCritical: 3, FailuresBeforeWarning: 1, Body: "{}", OnUpdate: "ignore",
		}},
		CheckRestart:    &CheckRestart{Limit: 2},
		Meta:            map[string]string{"m": "1"},
		CanaryMeta:      map[string]string{"c": "1"},
		TaggedAddresses: map[string]string{"lan": "10.0.0.1"},
		TaskName:        "server", OnUpdate: "ignore_warnings", Provider: "nomad", Cluster: "default", Kind: "k",
	}
}

func fullTask() *Task {
	return &Task{
		Name: "server", Driver: "raw_exec", User: "nobody",
		Lifecycle:   &TaskLifecycle{Hook: TaskLifecycleHookPrestart, Sidecar: true},
		Config:      map[string]interface{}{"command": "/bin/server", "args": []interface{}{"-p", "8080"}},
		Constraints: []*Constraint{{LTarget: "${attr.os.name}", RTarget: "debian", Operand: "="}},
		Affinities:  []*Affinity{{LTarget: "${attr.cpu.arch}", RTarget: "amd64", Operand: "="}},
		Env:         map[string]string{"PORT": "${NOMAD_PORT_http}"},
		Services:    []*Service{{Name: "task-svc"}},
		Resources: &Resources{CPU: new(200), Cores: new(0), MemoryMB: new(64), MemoryMaxMB: new(128), DiskMB: new(10),
			Devices: []*RequestedDevice{{Name: "nvidia/gpu", Count: new(uint64(2)),
				Constraints: []*Constraint{{LTarget: "${device.attr.memory}", RTarget: "2 GiB", Operand: ">="}},
				Affinities:  []*Affinity{{LTarget: "${device.model}", RTarget: "A100", Operand: "=", Weight: new(int8(50))}}}}},
		RestartPolicy: &RestartPolicy{Attempts: new(1)},
		Meta:          map[string]string{"k": "v"},
		KillTimeout:   new(20 * time.Second),
		LogConfig:     &LogConfig{MaxFiles: new(3), MaxFileSizeMB: new(5), Disabled: new(true)},
		Artifacts: []*TaskArtifact{{GetterSource: new("https://example.com/a.tgz"),
			GetterOptions: map[string]string{"checksum": "sha256:00"}, GetterHeaders: map[string]string{"X": "y"},
			GetterMode: new("file"), GetterInsecure: new(true), RelativeDest: new("local/a"), Chown: true}},
		Templates: []*Template{{SourcePath: new("in.tpl"), DestPath: new("local/out"), EmbeddedTmpl: new("x={{ .X }}"),
			ChangeMode: new("script"), ChangeScript: &ChangeScript{Command: new("/bin/reload"), Args: []string{"-a"},
				Timeout: new(time.Second), FailOnError: new(true)},
			ChangeSignal: new("SIGUSR1"), Once: new(true), Splay: new(time.Second), Perms: new("0600"),
			Uid: new(1000), Gid: new(1000), LeftDelim: new("[["), RightDelim: new("]]"), Envvars: new(true),
			Wait: &WaitConfig{Min: new(time.Second), Max: new(time.Minute)}, ErrMissingKey: new(true)}},
		DispatchPayload: &DispatchPayloadConfig{File: "input.json"},
		VolumeMounts: []*VolumeMount{{Volume: new("data"), Destination: new("/data"), ReadOnly: new(true),
			PropagationMode: new("host-to-task"), SELinuxLabel: new("z")}},
		Leader:        true,
		ShutdownDelay: 3 * time.Second,
		KillSignal:    "SIGTERM",
		Kind:          "",
	}
}
