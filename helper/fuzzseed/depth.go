package fuzzseed

// BracketDepth returns how deeply (, [ and { nest in src, counting every
// byte as syntax: it ignores strings and comments, so it over-estimates
// for text that has brackets inside quotes. Targets use it to set aside
// inputs nested deeper than a parser recurses safely.
func BracketDepth(src []byte) int {
	depth, deepest := 0, 0
	for _, c := range src {
		switch c {
		case '(', '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ')', ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}
