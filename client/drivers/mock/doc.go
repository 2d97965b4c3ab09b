// Package mock is a driver that runs no process: a task "runs" for run_for
// on the client's clock and exits with exit_code. It is how client tests
// exercise restart policies, kill timeouts and status reporting with a fake
// clock, and how simulations run thousands of tasks on one machine.
//
// Config: run_for (duration, 0 = until stopped), exit_code, start_error,
// start_error_recoverable, kill_after (how long the task takes to die after
// StopTask's signal), stdout_string, stdout_repeat, stdout_repeat_duration;
// declared in structs/driver_config_mock.go, which job validation checks.
//
// Each task has one goroutine, owned by the Driver; Shutdown stops them
// (the tasks are forgotten, as a real process would outlive the client)
// and waits for them.
package mock
