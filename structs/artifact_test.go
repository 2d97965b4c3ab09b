package structs

import (
	"strings"
	"testing"
)

func TestArtifactValidationNamesGroupTaskAndIndex(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	good := []*TaskArtifact{
		{GetterSource: "https://example.com/app.tar.gz", RelativeDest: "local/"},
		{GetterSource: "https://example.com/app", GetterMode: "file", RelativeDest: "local/bin/app",
			GetterOptions: map[string]string{"checksum": "sha256:" + sha}},
		{GetterSource: "/opt/conf.ini", GetterMode: "dir", RelativeDest: "../alloc/data"},
		{GetterSource: "https://example.com/${NOMAD_META_v}.zip", RelativeDest: "${NOMAD_TASK_DIR}/x",
			GetterOptions: map[string]string{"checksum": "md5:${NOMAD_META_sum}"}},
	}
	j := testJob()
	j.TaskGroups[0].Tasks[0].Artifacts = good
	j.Canonicalize()
	if err := j.Validate(); err != nil {
		t.Fatalf("valid artifacts refused: %v", err)
	}

	cases := []struct {
		art  *TaskArtifact
		want string
	}{
		{&TaskArtifact{RelativeDest: "local/"}, "source is missing"},
		{&TaskArtifact{GetterSource: "https://e.com/a", GetterMode: "folder"}, `mode "folder" must be any, file or dir`},
		{&TaskArtifact{GetterSource: "https://e.com/a", RelativeDest: "../../etc"}, `destination "../../etc" leads outside the alloc dir`},
		{&TaskArtifact{GetterSource: "https://e.com/a", GetterOptions: map[string]string{"checksum": sha}}, `options.checksum "` + sha + `" must be "type:value"`},
		{&TaskArtifact{GetterSource: "https://e.com/a", GetterOptions: map[string]string{"checksum": "crc32:" + sha}}, `options.checksum type "crc32" must be md5, sha1, sha256 or sha512`},
		{&TaskArtifact{GetterSource: "https://e.com/a", GetterOptions: map[string]string{"checksum": "md5:" + sha}}, "options.checksum \"md5:" + sha + "\": a md5 value is 32 hex digits"},
		{&TaskArtifact{GetterSource: "https://e.com/a", GetterOptions: map[string]string{"checksum": "sha1:zz"}}, `options.checksum "sha1:zz": a sha1 value is 40 hex digits`},
	}
	for _, c := range cases {
		j := testJob()
		j.TaskGroups[0].Tasks[0].Artifacts = []*TaskArtifact{good[0], c.art}
		j.Canonicalize()
		err := j.Validate()
		if err == nil {
			t.Fatalf("%+v accepted", c.art)
		}
		want := `group "web" task "server" artifact[1]: ` + c.want
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
}
