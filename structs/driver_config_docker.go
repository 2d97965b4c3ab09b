package structs

// The config keys of the docker driver (client/drivers/docker), as in
// Nomad's docker task config. The driver reads its config under these
// names and checks it against this schema when a task starts, so a job
// stored before a key was refused is refused there with the same words.
const (
	DockerConfigImage            = "image"
	DockerConfigCommand          = "command"
	DockerConfigArgs             = "args"
	DockerConfigEntrypoint       = "entrypoint"
	DockerConfigWorkDir          = "work_dir"
	DockerConfigLabels           = "labels"
	DockerConfigPorts            = "ports"
	DockerConfigNetworkMode      = "network_mode"
	DockerConfigHostname         = "hostname"
	DockerConfigDNSServers       = "dns_servers"
	DockerConfigDNSSearchDomains = "dns_search_domains"
	DockerConfigDNSOptions       = "dns_options"
	DockerConfigExtraHosts       = "extra_hosts"
	DockerConfigVolumes          = "volumes"
	DockerConfigVolumeDriver     = "volume_driver"
	DockerConfigMount            = "mount"
	DockerConfigPrivileged       = "privileged"
	DockerConfigCapAdd           = "cap_add"
	DockerConfigCapDrop          = "cap_drop"
	DockerConfigMemoryHardLimit  = "memory_hard_limit"
	DockerConfigCPUHardLimit     = "cpu_hard_limit"
	DockerConfigCPUCFSPeriod     = "cpu_cfs_period"
	DockerConfigCPUSetCPUs       = "cpuset_cpus"
	DockerConfigPidsLimit        = "pids_limit"
	DockerConfigUlimit           = "ulimit"
	DockerConfigSysctl           = "sysctl"
	DockerConfigShmSize          = "shm_size"
	DockerConfigSecurityOpt      = "security_opt"
	DockerConfigReadonlyRootfs   = "readonly_rootfs"
	DockerConfigInit             = "init"
	DockerConfigIPCMode          = "ipc_mode"
	DockerConfigPidMode          = "pid_mode"
	DockerConfigUTSMode          = "uts_mode"
	DockerConfigUsernsMode       = "userns_mode"
	DockerConfigTTY              = "tty"
	DockerConfigInteractive      = "interactive"
	DockerConfigAuth             = "auth"
	DockerConfigAuthSoftFail     = "auth_soft_fail"
	DockerConfigForcePull        = "force_pull"
	DockerConfigImagePullTimeout = "image_pull_timeout"
	DockerConfigLogging          = "logging"
	DockerConfigHealthchecks     = "healthchecks"

	// The keys of a mount block and of its option blocks.
	DockerMountType          = "type"
	DockerMountTarget        = "target"
	DockerMountSource        = "source"
	DockerMountReadonly      = "readonly"
	DockerMountBindOptions   = "bind_options"
	DockerMountPropagation   = "propagation"
	DockerMountVolumeOptions = "volume_options"
	DockerMountNoCopy        = "no_copy"
	DockerMountLabels        = "labels"
	DockerMountTmpfsOptions  = "tmpfs_options"
	DockerMountTmpfsSize     = "size"
	DockerMountTmpfsMode     = "mode"

	// The keys of the auth block: registry credentials for the pull.
	DockerAuthUsername      = "username"
	DockerAuthPassword      = "password"
	DockerAuthEmail         = "email"
	DockerAuthServerAddress = "server_address"

	// The keys of the logging block: the container's docker log driver
	// ("type", or Nomad's older "driver"), and its options.
	DockerLoggingType   = "type"
	DockerLoggingDriver = "driver"
	DockerLoggingConfig = "config"

	// DockerHealthchecksDisable turns off the image's HEALTHCHECK.
	DockerHealthchecksDisable = "disable"
)

// DockerConfigSchema is the docker driver's config schema.
var DockerConfigSchema = &DriverConfigSchema{Keys: map[string]DriverConfigKey{
	DockerConfigImage:            {Kind: KindString, Required: true, Example: `image = "redis:7"`},
	DockerConfigCommand:          {Kind: KindString},
	DockerConfigArgs:             {Kind: KindStrings},
	DockerConfigEntrypoint:       {Kind: KindStrings},
	DockerConfigWorkDir:          {Kind: KindString},
	DockerConfigLabels:           {Kind: KindStringMap},
	DockerConfigPorts:            {Kind: KindStrings},
	DockerConfigNetworkMode:      {Kind: KindString},
	DockerConfigHostname:         {Kind: KindString},
	DockerConfigDNSServers:       {Kind: KindStrings},
	DockerConfigDNSSearchDomains: {Kind: KindStrings},
	DockerConfigDNSOptions:       {Kind: KindStrings},
	DockerConfigExtraHosts:       {Kind: KindStrings},
	DockerConfigVolumes:          {Kind: KindStrings},
	DockerConfigVolumeDriver:     {Kind: KindString},
	DockerConfigMount: {Kind: KindBlocks, Block: &DriverConfigSchema{Keys: map[string]DriverConfigKey{
		DockerMountType:     {Kind: KindString},
		DockerMountTarget:   {Kind: KindString, Required: true, Example: `target = "/data"`},
		DockerMountSource:   {Kind: KindString},
		DockerMountReadonly: {Kind: KindBool},
		DockerMountBindOptions: {Kind: KindBlock, Block: &DriverConfigSchema{Keys: map[string]DriverConfigKey{
			DockerMountPropagation: {Kind: KindString},
		}}},
		DockerMountVolumeOptions: {Kind: KindBlock, Block: &DriverConfigSchema{Keys: map[string]DriverConfigKey{
			DockerMountNoCopy: {Kind: KindBool},
			DockerMountLabels: {Kind: KindStringMap},
		}}},
		DockerMountTmpfsOptions: {Kind: KindBlock, Block: &DriverConfigSchema{Keys: map[string]DriverConfigKey{
			DockerMountTmpfsSize: {Kind: KindNumber},
			DockerMountTmpfsMode: {Kind: KindNumber},
		}}},
	}}},
	DockerConfigPrivileged:      {Kind: KindBool},
	DockerConfigCapAdd:          {Kind: KindStrings},
	DockerConfigCapDrop:         {Kind: KindStrings},
	DockerConfigMemoryHardLimit: {Kind: KindNumber},
	DockerConfigCPUHardLimit:    {Kind: KindBool},
	DockerConfigCPUCFSPeriod:    {Kind: KindNumber},
	DockerConfigCPUSetCPUs:      {Kind: KindString},
	DockerConfigPidsLimit:       {Kind: KindNumber},
	DockerConfigUlimit:          {Kind: KindStringMap},
	DockerConfigSysctl:          {Kind: KindStringMap},
	DockerConfigShmSize:         {Kind: KindNumber},
	DockerConfigSecurityOpt:     {Kind: KindStrings},
	DockerConfigReadonlyRootfs:  {Kind: KindBool},
	DockerConfigInit:            {Kind: KindBool},
	DockerConfigIPCMode:         {Kind: KindString},
	DockerConfigPidMode:         {Kind: KindString},
	DockerConfigUTSMode:         {Kind: KindString},
	DockerConfigUsernsMode:      {Kind: KindString},
	DockerConfigTTY:             {Kind: KindBool},
	DockerConfigInteractive:     {Kind: KindBool},
	DockerConfigAuth: {Kind: KindBlock, Block: &DriverConfigSchema{Keys: map[string]DriverConfigKey{
		DockerAuthUsername:      {Kind: KindString},
		DockerAuthPassword:      {Kind: KindString},
		DockerAuthEmail:         {Kind: KindString},
		DockerAuthServerAddress: {Kind: KindString},
	}}},
	DockerConfigAuthSoftFail:     {Kind: KindBool},
	DockerConfigForcePull:        {Kind: KindBool},
	DockerConfigImagePullTimeout: {Kind: KindDuration},
	DockerConfigLogging: {Kind: KindBlock, Block: &DriverConfigSchema{Keys: map[string]DriverConfigKey{
		DockerLoggingType:   {Kind: KindString},
		DockerLoggingDriver: {Kind: KindString},
		DockerLoggingConfig: {Kind: KindStringMap},
	}}},
	DockerConfigHealthchecks: {Kind: KindBlock, Block: &DriverConfigSchema{Keys: map[string]DriverConfigKey{
		DockerHealthchecksDisable: {Kind: KindBool},
	}}},
}}

func init() {
	RegisterDriverConfigSchema("docker", DockerConfigSchema)
}
