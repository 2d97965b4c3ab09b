package structs

import "strconv"

func itoa(i int) string { return strconv.Itoa(i) }

func copyStringMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func copyStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s...)
}

func boolPtr(b bool) *bool { return &b }

// BoolPtr returns a pointer to b, for optional fields.
func BoolPtr(b bool) *bool { return &b }
