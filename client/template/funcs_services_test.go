package template

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/structs"
)

func testCatalog() *ServiceData {
	reg := func(id, name, addr string, port int, tags ...string) *structs.ServiceRegistration {
		return &structs.ServiceRegistration{ID: id, ServiceName: name, Namespace: "default", NodeID: "n1", Datacenter: "dc1",
			JobID: "shop", AllocID: "a-" + id, Address: addr, Port: port, Tags: tags}
	}
	return &ServiceData{Region: "global", Registrations: []*structs.ServiceRegistration{
		reg("1", "db", "10.0.0.5", 5432, "primary"),
		reg("2", "web", "10.0.0.1", 8080, "v1", "live"),
		reg("3", "web", "10.0.0.2", 8081, "v2"),
	}}
}

func renderServices(t *testing.T, data string, services *ServiceData) (string, error) {
	t.Helper()
	in, root := allocTree(t)
	in.Services = services
	in.Templates = []*structs.Template{{EmbeddedTmpl: data, DestPath: "local/out"}}
	if _, err := Render(in); err != nil {
		return "", err
	}
	out, err := os.ReadFile(filepath.Join(root, "web/local/out"))
	if err != nil {
		t.Fatal(err)
	}
	return string(out), nil
}

func TestNomadServiceRendersTheLiveInstances(t *testing.T) {
	cases := []struct{ name, data, want string }{
		{"every instance of a service", `{{ range nomadService "web" }}{{ .Address }}:{{ .Port }} {{ end }}`, "10.0.0.1:8080 10.0.0.2:8081 "},
		{"only instances with the tag", `{{ range nomadService "v2.web" }}{{ .Address }}:{{ .Port }}{{ end }}`, "10.0.0.2:8081"},
		{"the client's own region", `{{ range nomadService "db@global" }}{{ .Name }} {{ .JobID }} {{ .AllocID }} {{ .Node }} {{ .Datacenter }}{{ end }}`, "db shop a-1 n1 dc1"},
		{"an unknown service is empty", `{{ range nomadService "nothing" }}x{{ else }}none{{ end }}`, "none"},
		{"tags can be tested", `{{ range nomadService "web" }}{{ if .Tags.Contains "live" }}{{ .Port }}{{ end }}{{ end }}`, "8080"},
		{"every service with its tags", `{{ range nomadServices }}{{ .Name }}={{ join "," .Tags }};{{ end }}`, "db=primary;web=live,v1,v2;"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := renderServices(t, tc.data, testCatalog())
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("rendered %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNomadServiceRefusesWhatItCannotAnswer(t *testing.T) {
	cases := []struct {
		name, data string
		services   *ServiceData
		want       string
	}{
		{"another region", `{{ nomadService "web@eu" }}`, testCatalog(), `region "eu" is not this client's`},
		{"a name that is no service name", `{{ nomadService "we b" }}`, testCatalog(), "use only letters, digits and dashes"},
		{"the subset form", `{{ nomadService 2 "key" "web" }}`, testCatalog(), "takes one argument"},
		{"a catalog that was not read", `{{ nomadService "web" }}`, nil, "service catalog was not read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderServices(t, tc.data, tc.services)
			var te *Error
			if !errors.As(err, &te) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a template error saying %q", err, tc.want)
			}
		})
	}
}

// The render child gets the catalog from the agent: the same template
// renders the same through a Renderer.
func TestNomadServiceInTheRenderChild(t *testing.T) {
	in, root := allocTree(t)
	in.Services = testCatalog()
	in.Templates = []*structs.Template{{EmbeddedTmpl: `{{ range nomadService "web" }}{{ .Address }}:{{ .Port }},{{ end }}`, DestPath: "local/out"}}
	if !UsesServices(in.Templates[0]) {
		t.Fatal("UsesServices missed a nomadService call")
	}
	if _, err := NewRenderer(RendererConfig{}).Render(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(filepath.Join(root, "web/local/out"))
	if string(out) != "10.0.0.1:8080,10.0.0.2:8081," {
		t.Fatalf("rendered %q", out)
	}
}
