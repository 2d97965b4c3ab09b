package command

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// jsonSubset reports how got differs from want, where want lists only the
// fields that matter.
func jsonSubset(got, want string) error {
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return fmt.Errorf("not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return fmt.Errorf("bad want: %v", err)
	}
	return subset("$", g, w)
}

func subset(path string, g, w any) error {
	wm, ok := w.(map[string]any)
	if !ok {
		if !reflect.DeepEqual(g, w) {
			return fmt.Errorf("%s = %v, want %v", path, g, w)
		}
		return nil
	}
	gm, ok := g.(map[string]any)
	if !ok {
		return fmt.Errorf("%s = %v, want an object", path, g)
	}
	for k, wv := range wm {
		if err := subset(path+"."+k, gm[k], wv); err != nil {
			return err
		}
	}
	return nil
}
