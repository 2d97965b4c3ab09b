package structs

import (
	"encoding/json"
	"strings"
	"testing"
)

// A schema with blocks, registered under a name no real driver has, to
// check nested keys the way a docker schema would use them.
func init() {
	RegisterDriverConfigSchema("test_blocks", &DriverConfigSchema{Keys: map[string]DriverConfigKey{
		"image":  {Kind: KindString, Required: true},
		"labels": {Kind: KindStringMap},
		"logging": {Kind: KindBlock, Block: &DriverConfigSchema{Keys: map[string]DriverConfigKey{
			"type":   {Kind: KindString},
			"config": {Kind: KindStringMap},
		}}},
		"mount": {Kind: KindBlocks, Block: &DriverConfigSchema{Keys: map[string]DriverConfigKey{
			"type":     {Kind: KindString},
			"target":   {Kind: KindString, Required: true},
			"readonly": {Kind: KindBool},
		}}},
	}})
}

// TestDriverConfigIsCheckedAgainstTheDriversSchema: an unknown key is
// refused naming the driver and the closest known key, a value of the
// wrong shape naming the shape wanted, a missing required key with an
// example; values interpolated on the client pass, and so does the
// config of a driver Drover has no schema for.
func TestDriverConfigIsCheckedAgainstTheDriversSchema(t *testing.T) {
	cases := []struct {
		name   string
		driver string
		config map[string]any
		want   []string // nil means valid
	}{
		{"exec with command and args", "exec", map[string]any{"command": "/bin/sleep", "args": []any{"1"}}, nil},
		{"exec with every key Nomad knows", "exec", map[string]any{"command": "/bin/sleep", "args": []string{"1"}, "pid_mode": "private",
			"ipc_mode": "host", "cap_add": []any{"net_raw"}, "cap_drop": []any{"all"}, "work_dir": "/local"}, nil},
		{"a misspelt key gets the key meant, and is not also reported missing", "exec", map[string]any{"comand": "/bin/sleep"},
			[]string{`group "web" task "server": driver "exec": unknown config key "comand"; did you mean "command"?`}},
		{"a key in the wrong case", "raw_exec", map[string]any{"Command": "/bin/true"}, []string{`driver "raw_exec": unknown config key "Command"; did you mean "command"?`}},
		{"a key like none lists the known ones", "exec", map[string]any{"command": "/bin/true", "image": "redis"},
			[]string{`driver "exec": unknown config key "image"; the known keys are args, cap_add, cap_drop, command, ipc_mode, pid_mode, work_dir`}},
		{"a missing command", "raw_exec", map[string]any{"args": []any{"x"}}, []string{`driver "raw_exec": config key "command" is missing (e.g. command = "/bin/sleep")`}},
		{"no config at all", "exec", nil, []string{`driver "exec": config key "command" is missing`}},
		{"a null command is missing", "exec", map[string]any{"command": nil}, []string{`config key "command" is missing`}},
		{"args as a string", "exec", map[string]any{"command": "/bin/echo", "args": "x"}, []string{`driver "exec": config key "args" must be a list of strings, got a string ("x")`}},
		{"args with numbers and bools, as HCL converts", "raw_exec", map[string]any{"command": "/bin/echo", "args": []any{1, 2.5, true, "x"}}, nil},
		{"args with a list in it", "raw_exec", map[string]any{"command": "/bin/echo", "args": []any{"a", []any{"b"}}},
			[]string{`config key "args" must be a list of strings, element 1 is a list`}},
		{"args with a null in it", "raw_exec", map[string]any{"command": "/bin/echo", "args": []any{nil, "x"}},
			[]string{`config key "args" must be a list of strings, element 0 is null`}},
		{"command as a number", "raw_exec", map[string]any{"command": 7}, []string{`config key "command" must be a string, got a number (7)`}},
		{"command interpolated", "raw_exec", map[string]any{"command": "${NOMAD_TASK_DIR}/run"}, nil},
		{"raw_exec's cgroup overrides and oom score", "raw_exec", map[string]any{"command": "/bin/true",
			"cgroup_v1_override": map[string]any{"pids": "/sys/fs/cgroup/pids/x"}, "cgroup_v2_override": "custom.slice/app.scope", "oom_score_adj": 500}, nil},
		{"a cgroup override as one block, as HCL writes it", "raw_exec", map[string]any{"command": "/bin/true",
			"cgroup_v1_override": []map[string]any{{"pids": "x"}}}, nil},
		{"a cgroup override that is a string", "raw_exec", map[string]any{"command": "/bin/true", "cgroup_v1_override": "pids"},
			[]string{`config key "cgroup_v1_override" must be a map of strings, got a string ("pids")`}},
		{"oom_score_adj as words", "raw_exec", map[string]any{"command": "/bin/true", "oom_score_adj": "high"},
			[]string{`config key "oom_score_adj" must be a number, got a string ("high")`}},
		{"mock durations as text and as nanoseconds", "mock_driver", map[string]any{"run_for": "1h", "kill_after": 3e9, "stdout_repeat_duration": int64(5)}, nil},
		{"mock under its alias", "mock", map[string]any{"run_for": "1s", "exit_code": 3}, nil},
		{"mock numbers and bools as text", "mock_driver", map[string]any{"exit_code": "2", "start_error_recoverable": "true", "start_error": "boom"}, nil},
		{"mock values interpolated", "mock_driver", map[string]any{"exit_code": "${NOMAD_META_code}", "run_for": "${NOMAD_META_for}", "start_error_recoverable": "${NOMAD_META_r}"}, nil},
		{"a mock duration that is not one", "mock_driver", map[string]any{"run_for": "soon"}, []string{`driver "mock_driver": config key "run_for" must be a duration (e.g. "10s"), got a string ("soon")`}},
		{"a mock number that is not one", "mock_driver", map[string]any{"exit_code": "two"}, []string{`config key "exit_code" must be a number, got a string ("two")`}},
		{"a mock bool that is not one", "mock_driver", map[string]any{"start_error_recoverable": "yes please"}, []string{`config key "start_error_recoverable" must be a boolean`}},
		{"a mock key Drover's mock does not read", "mock_driver", map[string]any{"run_fro": "1s"}, []string{`driver "mock_driver": unknown config key "run_fro"; did you mean "run_for"?`}},
		{"every problem at once, in key order", "exec", map[string]any{"args": "x", "comand": "y", "pid_mod": 1},
			[]string{`config key "args" must be a list of strings`, `unknown config key "comand"; did you mean "command"?`, `unknown config key "pid_mod"; did you mean "pid_mode"?`}},
		{"docker with a misspelt image gets image", "docker", map[string]any{"imgae": "x"},
			[]string{`driver "docker": unknown config key "imgae"; did you mean "image"?`}},
		{"docker without an image", "docker", map[string]any{"command": "redis-server"},
			[]string{`driver "docker": config key "image" is missing (e.g. image = "redis:7")`}},
		{"docker with Nomad's blocks and maps", "docker", map[string]any{"image": "redis:7", "ports": []any{"db"},
			"mount":        []map[string]any{{"type": "tmpfs", "target": "/t", "tmpfs_options": []map[string]any{{"size": 100000}}}},
			"auth":         []map[string]any{{"username": "u", "password": "p"}},
			"logging":      []map[string]any{{"type": "json-file", "config": []map[string]any{{"max-size": "10m"}}}},
			"healthchecks": []map[string]any{{"disable": true}},
			"ulimit":       []map[string]any{{"nofile": "4096:8192"}}, "sysctl": map[string]any{"net.core.somaxconn": "16384"},
			"labels": map[string]any{"team": "web"}, "image_pull_timeout": "10m"}, nil},
		{"docker with a misspelt key in a mount", "docker", map[string]any{"image": "redis:7", "mount": []map[string]any{{"target": "/a", "sorce": "x"}}},
			[]string{`driver "docker": unknown config key "mount[0].sorce"; did you mean "mount[0].source"?`}},
		{"a driver with no schema is not checked", "podman", map[string]any{"anything": []any{map[string]any{"at": "all"}}}, nil},
		{"blocks as HCL gives them", "test_blocks", map[string]any{"image": "redis", "labels": map[string]any{"a": "b", "n": 1},
			"logging": []map[string]any{{"type": "json-file", "config": []map[string]any{{"max-size": "10m"}}}},
			"mount":   []map[string]any{{"type": "bind", "target": "/a"}, {"target": "/b", "readonly": true}}}, nil},
		{"blocks as JSON gives them", "test_blocks", map[string]any{"image": "redis",
			"logging": map[string]any{"type": "json-file"},
			"mount":   []any{map[string]any{"target": "/a", "readonly": "false"}}}, nil},
		{"an unknown key in a block names its path", "test_blocks", map[string]any{"image": "redis", "mount": []map[string]any{{"target": "/a"}, {"targte": "/b"}}},
			[]string{`driver "test_blocks": unknown config key "mount[1].targte"; did you mean "mount[1].target"?`}},
		{"a missing key in a block", "test_blocks", map[string]any{"image": "redis", "mount": []map[string]any{{"type": "bind"}}},
			[]string{`config key "mount[0].target" is missing`}},
		{"a wrong value in a single block", "test_blocks", map[string]any{"image": "redis", "logging": []map[string]any{{"type": []any{"x"}}}},
			[]string{`config key "logging.type" must be a string, got a list`}},
		{"two blocks where one is wanted", "test_blocks", map[string]any{"image": "redis", "logging": []map[string]any{{}, {}}},
			[]string{`config key "logging" must be a block, got 2 blocks`}},
		{"a block that is a string", "test_blocks", map[string]any{"image": "redis", "mount": "/a"},
			[]string{`config key "mount" must be a list of blocks, got a string ("/a")`}},
		{"a map with a nested map", "test_blocks", map[string]any{"image": "redis", "labels": map[string]any{"a": map[string]any{}}},
			[]string{`config key "labels" must be a map of strings, "a" is a map`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := testJob()
			task := j.TaskGroups[0].Tasks[0]
			task.Driver, task.Config = c.driver, c.config
			j.Canonicalize()
			err := j.Validate()
			if c.want == nil {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want errors %q, got none", c.want)
			}
			ve := err.(*ValidationError)
			if len(ve.Problems) != len(c.want) {
				t.Fatalf("want %d problems %q, got %q", len(c.want), c.want, ve.Problems)
			}
			for i, w := range c.want {
				if !strings.Contains(ve.Problems[i], w) {
					t.Errorf("problem %d is %q, want it to contain %q", i, ve.Problems[i], w)
				}
			}
		})
	}
}

// TestDriverConfigFromJSON: a config decoded from a JSON body (float64
// numbers, []any lists, map[string]any objects) is judged like one from
// HCL.
func TestDriverConfigFromJSON(t *testing.T) {
	var good, bad map[string]any
	if err := json.Unmarshal([]byte(`{"command": "/bin/sleep", "args": ["1", 2], "oom_score_adj": 10, "cgroup_v1_override": {"pids": "x"}}`), &good); err != nil {
		t.Fatal(err)
	}
	if err := ValidateDriverConfig("raw_exec", good); err != nil {
		t.Fatalf("JSON config refused: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"command": "/bin/sleep", "args": "1", "oom_score_adj": true}`), &bad); err != nil {
		t.Fatal(err)
	}
	err := ValidateDriverConfig("raw_exec", bad)
	want := `2 problems:
  * driver "raw_exec": config key "args" must be a list of strings, got a string ("1")
  * driver "raw_exec": config key "oom_score_adj" must be a number, got a boolean (true)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want\n%s", err, want)
	}
	d := json.NewDecoder(strings.NewReader(`{"exit_code": 3, "run_for": 1000000000}`))
	d.UseNumber()
	var num map[string]any
	if err := d.Decode(&num); err != nil {
		t.Fatal(err)
	}
	if err := ValidateDriverConfig("mock_driver", num); err != nil {
		t.Fatalf("json.Number values refused: %v", err)
	}
}

func TestClosestKey(t *testing.T) {
	known := map[string]DriverConfigKey{"command": {}, "args": {}, "pid_mode": {}, "ipc_mode": {}, "cap_add": {}, "cap_drop": {}}
	for in, want := range map[string]string{
		"comand": "command", "commnad": "command", "arg": "args", "argv": "args", "cap-add": "cap_add",
		"pidmode": "pid_mode", "x": "", "image": "", "entrypoint": "", "capabilities": "",
	} {
		if got := closestKey(in, known); got != want {
			t.Errorf("closestKey(%q) = %q, want %q", in, got, want)
		}
	}
	docker := map[string]DriverConfigKey{"image": {}, "ipc_mode": {}, "init": {}, "mount": {}}
	for in, want := range map[string]string{"imgae": "image", "iamge": "image", "moutn": "mount", "inti": "init"} {
		if got := closestKey(in, docker); got != want {
			t.Errorf("closestKey(%q) = %q, want %q (a swap of two letters is one edit)", in, got, want)
		}
	}
	if d := levenshtein("ca", "abc"); d != 3 {
		t.Errorf("levenshtein(ca, abc) = %d, want 3 (no edit of a swapped pair)", d)
	}
	if d := levenshtein("kitten", "sitting"); d != 3 {
		t.Errorf("levenshtein(kitten, sitting) = %d, want 3", d)
	}
}
