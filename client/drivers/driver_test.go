package drivers

import (
	"syscall"
	"testing"
	"time"
)

func TestConfigGettersAcceptEveryDecodedShape(t *testing.T) {
	cfg := map[string]any{
		"json_args": []any{"a", "b"}, "hcl_args": []string{"c"}, "f": float64(3),
		"u": uint64(4), "s": "5", "d": "1m", "dn": int64(time.Second), "b": "true",
	}
	if a, _ := ConfigStrings(cfg, "json_args"); len(a) != 2 || a[1] != "b" {
		t.Fatalf("json args: %v", a)
	}
	if a, _ := ConfigStrings(cfg, "hcl_args"); len(a) != 1 || a[0] != "c" {
		t.Fatalf("hcl args: %v", a)
	}
	for key, want := range map[string]int64{"f": 3, "u": 4, "s": 5, "missing": 9} {
		if n, err := ConfigInt(cfg, key, 9); err != nil || n != want {
			t.Fatalf("%s: got %d, %v", key, n, err)
		}
	}
	if d, _ := ConfigDuration(cfg, "d"); d != time.Minute {
		t.Fatalf("d: %v", d)
	}
	if d, _ := ConfigDuration(cfg, "dn"); d != time.Second {
		t.Fatalf("dn: %v", d)
	}
	if b, _ := ConfigBool(cfg, "b"); !b {
		t.Fatal("b should be true")
	}
	if _, err := ConfigString(cfg, "f"); err == nil {
		t.Fatal("a number is not a string")
	}
}

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]syscall.Signal{"": syscall.SIGINT, "SIGTERM": syscall.SIGTERM, "kill": syscall.SIGKILL} {
		got, err := ParseSignal(in, syscall.SIGINT)
		if err != nil || got != want {
			t.Fatalf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseSignal("SIGNOPE", 0); err == nil {
		t.Fatal("want an error for an unknown signal")
	}
}
