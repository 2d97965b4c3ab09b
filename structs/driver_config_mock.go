package structs

// The config keys of the mock driver (client/drivers/mock, and the node
// simulator's copy of it in client/nodesim): what a simulated task does.
const (
	MockConfigRunFor                = "run_for"
	MockConfigExitCode              = "exit_code"
	MockConfigStartError            = "start_error"
	MockConfigStartErrorRecoverable = "start_error_recoverable"
	MockConfigKillAfter             = "kill_after"
	MockConfigStdoutString          = "stdout_string"
	MockConfigStdoutRepeat          = "stdout_repeat"
	MockConfigStdoutRepeatDuration  = "stdout_repeat_duration"
)

func init() {
	s := &DriverConfigSchema{Keys: map[string]DriverConfigKey{
		MockConfigRunFor:                {Kind: KindDuration},
		MockConfigExitCode:              {Kind: KindNumber},
		MockConfigStartError:            {Kind: KindString},
		MockConfigStartErrorRecoverable: {Kind: KindBool},
		MockConfigKillAfter:             {Kind: KindDuration},
		MockConfigStdoutString:          {Kind: KindString},
		MockConfigStdoutRepeat:          {Kind: KindNumber},
		MockConfigStdoutRepeatDuration:  {Kind: KindDuration},
	}}
	// The driver answers to both names (client/drivers/mock Name, Alias).
	RegisterDriverConfigSchema("mock_driver", s)
	RegisterDriverConfigSchema("mock", s)
}
