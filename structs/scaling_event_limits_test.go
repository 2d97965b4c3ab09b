package structs

import (
	"strings"
	"testing"
)

func TestScalingEventsAreBoundedInSize(t *testing.T) {
	cases := []struct {
		name    string
		message string
		meta    map[string]any
		want    string // "" for accepted
	}{
		{"an autoscaler's event", "scaling up: cpu at 91%", map[string]any{"nomad_autoscaler.count.original": 2, "reason": "cpu"}, ""},
		{"a message at its bound", strings.Repeat("m", MaxScalingEventMessage), nil, ""},
		{"a message over its bound", strings.Repeat("m", MaxScalingEventMessage+1), nil, "Message is 4097 bytes, over the 4096 bytes"},
		// {"k":"vvv..."} is 8 bytes more than the value.
		{"meta at its bound", "", map[string]any{"k": strings.Repeat("v", MaxScalingEventMeta-8)}, ""},
		{"meta over its bound", "", map[string]any{"k": strings.Repeat("v", MaxScalingEventMeta-7)}, "Meta is 8193 bytes as JSON, over the 8192 bytes"},
		{"meta that JSON cannot hold", "", map[string]any{"f": func() {}}, "Meta cannot be encoded as JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckScalingEventSize(tc.message, tc.meta)
			if tc.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
