package template

import (
	"strings"
	"testing"
)

func TestParseFunctionsTakeEmptyAsZeroAndNameThemselvesInErrors(t *testing.T) {
	if v, err := parseUint(""); v != 0 || err != nil {
		t.Fatalf("parseUint(\"\") = %v, %v", v, err)
	}
	if v, err := parseFloat("2.5"); v != 2.5 || err != nil {
		t.Fatalf("parseFloat(\"2.5\") = %v, %v", v, err)
	}
	for name, err := range map[string]error{
		"parseBool":  second(parseBool("maybe")),
		"parseFloat": second(parseFloat("x")),
		"parseInt":   second(parseInt("1.5")),
		"parseUint":  second(parseUint("-1")),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), name+": ") {
			t.Errorf("%s: error %v does not name it", name, err)
		}
	}
	if v, _ := parseUint("-1"); v != 0 {
		t.Errorf("a failed parseUint gave %d, want 0", v)
	}
}

func second[T any](_ T, err error) error { return err }
