package structs

// The config keys of the exec and raw_exec drivers, as in Nomad. The
// client's drivers (client/drivers/executor) read command and args under
// these names.
const (
	// DriverConfigCommand is the program to run.
	DriverConfigCommand = "command"
	// DriverConfigArgs are its arguments.
	DriverConfigArgs = "args"

	// ExecConfigPIDMode and ExecConfigIPCMode choose a private or the
	// host's PID and IPC namespace for an exec task.
	ExecConfigPIDMode = "pid_mode"
	ExecConfigIPCMode = "ipc_mode"
	// ExecConfigCapAdd and ExecConfigCapDrop adjust an exec task's
	// Linux capabilities.
	ExecConfigCapAdd  = "cap_add"
	ExecConfigCapDrop = "cap_drop"
	// DriverConfigWorkDir is the task's working directory.
	DriverConfigWorkDir = "work_dir"

	// RawExecConfigCgroupV1Override, RawExecConfigCgroupV2Override and
	// RawExecConfigOOMScoreAdj are Nomad's raw_exec keys for putting the
	// task in existing cgroups and setting its OOM score.
	RawExecConfigCgroupV1Override = "cgroup_v1_override"
	RawExecConfigCgroupV2Override = "cgroup_v2_override"
	RawExecConfigOOMScoreAdj      = "oom_score_adj"
)

var commandKey = DriverConfigKey{Kind: KindString, Required: true, Example: `command = "/bin/sleep"`}

func init() {
	RegisterDriverConfigSchema("exec", &DriverConfigSchema{Keys: map[string]DriverConfigKey{
		DriverConfigCommand: commandKey,
		DriverConfigArgs:    {Kind: KindStrings},
		ExecConfigPIDMode:   {Kind: KindString},
		ExecConfigIPCMode:   {Kind: KindString},
		ExecConfigCapAdd:    {Kind: KindStrings},
		ExecConfigCapDrop:   {Kind: KindStrings},
		DriverConfigWorkDir: {Kind: KindString},
	}})
	RegisterDriverConfigSchema("raw_exec", &DriverConfigSchema{Keys: map[string]DriverConfigKey{
		DriverConfigCommand:           commandKey,
		DriverConfigArgs:              {Kind: KindStrings},
		RawExecConfigCgroupV1Override: {Kind: KindStringMap},
		RawExecConfigCgroupV2Override: {Kind: KindString},
		RawExecConfigOOMScoreAdj:      {Kind: KindNumber},
		DriverConfigWorkDir:           {Kind: KindString},
	}})
}
