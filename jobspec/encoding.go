package jobspec

import (
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// checkUTF8 refuses src unless it is UTF-8 text. HCL is defined over UTF-8,
// and a parsed job travels to the servers as JSON, which cannot carry other
// bytes: encoding/json would turn each into U+FFFD, so the job stored would
// not be the job written (a meta key of Latin-1 bytes became a different
// key). The error points at the first byte that is not UTF-8.
func checkUTF8(src []byte, filename string) hcl.Diagnostics {
	for off := 0; off < len(src); {
		r, size := utf8.DecodeRune(src[off:])
		if r == utf8.RuneError && size <= 1 {
			return hcl.Diagnostics{newDiag(rangeAt(filename, src, int64(off)), "Invalid character encoding",
				"Byte 0x%02x at offset %d is not UTF-8; job and variable files must be UTF-8 text. Save the file as UTF-8.",
				src[off], off)}
		}
		off += size
	}
	return nil
}
