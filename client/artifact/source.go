package artifact

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// supported is what an unsupported source's error tells the user.
const supported = "Drover fetches http:// and https:// URLs and files on the client (file:// URLs or absolute paths)"

// forcedRe matches go-getter's forced-getter prefix: "git::https://...".
var forcedRe = regexp.MustCompile(`^([A-Za-z0-9]+)::(.+)$`)

// shorthands are go-getter's scheme-less addresses that mean a getter
// Drover does not have, by the host they start with.
var shorthands = []struct{ prefix, kind string }{
	{"github.com/", "git"},
	{"gitlab.com/", "git"},
	{"bitbucket.org/", "git"},
	{"git@", "git"},
}

// checkSource refuses a source that go-getter would hand to a getter
// Drover does not install, or that no getter could read, with a message
// naming the source and what Drover fetches. src is already interpolated.
func checkSource(src string) error {
	if src == "" {
		return fmt.Errorf("%w: the source is empty; %s", ErrUnsupportedSource, supported)
	}
	rest, forced := src, ""
	if m := forcedRe.FindStringSubmatch(src); m != nil {
		switch forced = strings.ToLower(m[1]); forced {
		case "http", "https", "file":
			rest = m[2]
		default:
			return unsupported(src, forced)
		}
	}
	if strings.HasPrefix(rest, "/") {
		if forced == "http" || forced == "https" {
			return fmt.Errorf("%w: source %q forces the %s getter on a path; %s", ErrUnsupportedSource, src, forced, supported)
		}
		return nil
	}
	for _, s := range shorthands {
		if strings.HasPrefix(rest, s.prefix) {
			return unsupported(src, s.kind)
		}
	}
	u, err := url.Parse(rest)
	if err != nil {
		return fmt.Errorf("%w: source %q is not a URL (%v); %s", ErrUnsupportedSource, src, err, supported)
	}
	scheme := strings.ToLower(u.Scheme)
	if forced != "" && scheme != "" && (forced == "file") != (scheme == "file") {
		return fmt.Errorf("%w: source %q forces the %s getter on a %s:// URL; %s", ErrUnsupportedSource, src, forced, scheme, supported)
	}
	switch scheme {
	case "http", "https", "file":
		return nil
	case "":
		host, _, _ := strings.Cut(rest, "/")
		switch {
		case strings.Contains(host, "amazonaws.com"):
			return unsupported(src, "s3")
		case strings.Contains(host, "googleapis.com"):
			return unsupported(src, "gcs")
		}
		return fmt.Errorf("%w: source %q has no scheme and is not an absolute path; %s", ErrUnsupportedSource, src, supported)
	case "git", "ssh", "git+ssh":
		return unsupported(src, "git")
	default:
		return unsupported(src, strings.ToLower(u.Scheme))
	}
}

func unsupported(src, kind string) error {
	return fmt.Errorf("%w: source %q needs the %s getter, which Drover does not have; %s", ErrUnsupportedSource, src, kind, supported)
}

// address adds the artifact's options to src as query parameters, as
// Nomad does: go-getter reads checksum, archive and filename from there.
// An absolute path becomes a file:// URL so that its query is not taken
// for part of the file name.
func address(src string, options map[string]string) (string, error) {
	forced := ""
	if m := forcedRe.FindStringSubmatch(src); m != nil {
		forced, src = m[1]+"::", m[2]
	}
	if strings.HasPrefix(src, "/") {
		src = "file://" + src
	}
	if len(options) == 0 {
		return forced + src, nil
	}
	u, err := url.Parse(src)
	if err != nil {
		return "", fmt.Errorf("%w: source %q is not a URL (%v); %s", ErrUnsupportedSource, src, err, supported)
	}
	q := u.Query()
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		q.Set(k, options[k])
	}
	u.RawQuery = q.Encode()
	return forced + u.String(), nil
}

// checksumSizes are the checksum types go-getter and Nomad accept, with
// the length of their value in bytes.
var checksumSizes = map[string]int{"md5": 16, "sha1": 20, "sha256": 32, "sha512": 64}

// parseChecksum checks a `checksum` option ("type:value") and returns its
// type and value. go-getter accepts more forms (a bare value, a checksum
// file); Nomad's job validation allows only this one, and so does Drover.
func parseChecksum(v string) (typ, sum string, err error) {
	v = strings.TrimSpace(v)
	typ, sum, ok := strings.Cut(v, ":")
	if !ok {
		return "", "", fmt.Errorf("%w: checksum %q must be \"type:value\" with type md5, sha1, sha256 or sha512", ErrInvalidOption, v)
	}
	typ = strings.ToLower(typ)
	size, known := checksumSizes[typ]
	if !known {
		return "", "", fmt.Errorf("%w: checksum type %q in %q is not one of md5, sha1, sha256, sha512", ErrInvalidOption, typ, v)
	}
	b, err := hex.DecodeString(sum)
	if err != nil || len(b) != size {
		return "", "", fmt.Errorf("%w: checksum %q: a %s value is %d hex digits", ErrInvalidOption, v, typ, 2*size)
	}
	return typ, strings.ToLower(sum), nil
}
