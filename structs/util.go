package structs

import "strconv"

func itoa(i int) string { return strconv.Itoa(i) }

func copyStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s...)
}

func boolPtr(b bool) *bool { return &b }

// BoolPtr returns a pointer to b, for optional fields.
func BoolPtr(b bool) *bool { return &b }
