package structs

import (
	"errors"
	"strings"
	"testing"
)

func TestNodeValidateChecksTheSecretsForm(t *testing.T) {
	const good = "9f1c2b7e-3a4d-4e5f-8a6b-7c8d9e0f1a2b"
	cases := []struct {
		name, id, secret, want string
	}{
		{"a UUID is a sound secret", "node-1", good, ""},
		{"an upper-case UUID is too", "node-1", strings.ToUpper(good), ""},
		{"no secret", "node-1", "", "node secret ID is missing"},
		{"a short word", "node-1", "hunter2", "node secret ID is not a UUID: want 36 characters, hexadecimal digits in groups of 8-4-4-4-12 as the client generates, got 7 characters"},
		{"36 characters without the dashes in place", "node-1", strings.Repeat("a", 36), "got other characters"},
		{"a UUID with a non-hex digit", "node-1", "9f1c2b7e-3a4d-4e5f-8a6b-7c8d9e0f1a2g", "got other characters"},
		{"a UUID in braces", "node-1", "{" + good + "}", "got 38 characters"},
		{"the node's own ID", good, good, "node secret ID must not be the node ID"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := &Node{ID: c.id, SecretID: c.secret, Name: "n1", Datacenter: "dc1"}
			err := n.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want no error, got %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("want an error saying %q, got %v", c.want, err)
			}
			if err != nil && c.secret != "" && len(c.secret) > 8 && strings.Contains(err.Error(), c.secret) {
				t.Fatalf("the error repeats the secret: %v", err)
			}
		})
	}
}

func TestNodeCheckSecret(t *testing.T) {
	n := &Node{ID: "node-1", SecretID: "9f1c2b7e-3a4d-4e5f-8a6b-7c8d9e0f1a2b"}
	if err := n.CheckSecret(n.SecretID); err != nil {
		t.Fatalf("the node's own secret was refused: %v", err)
	}
	if err := n.CheckSecret(""); !errors.Is(err, ErrNodeSecretMissing) || !strings.Contains(err.Error(), "node node-1") {
		t.Fatalf("an empty secret: want ErrNodeSecretMissing naming the node, got %v", err)
	}
	for _, wrong := range []string{"9f1c2b7e-3a4d-4e5f-8a6b-7c8d9e0f1a2c", n.SecretID[:35], n.SecretID + "0", "node-1"} {
		if err := n.CheckSecret(wrong); !errors.Is(err, ErrNodeSecretDenied) {
			t.Fatalf("secret %q: want ErrNodeSecretDenied, got %v", wrong, err)
		}
	}
}

func TestNodeSanitizeCopiesWithoutTheSecret(t *testing.T) {
	n := testNode()
	clean := n.Sanitize()
	if clean.SecretID != "" {
		t.Fatalf("Sanitize kept the secret %q", clean.SecretID)
	}
	if n.SecretID != "s" {
		t.Fatalf("Sanitize changed the original's secret to %q", n.SecretID)
	}
	clean.Attributes = clean.Attributes.With("x", "y")
	if _, ok := n.Attributes.Get("x"); ok {
		t.Fatal("Sanitize shared the attributes map with the original")
	}
	if clean.ID != n.ID || clean.Name != n.Name || clean.NodeResources.Memory != n.NodeResources.Memory {
		t.Fatalf("Sanitize lost other fields: %+v", clean)
	}
	if (*Node)(nil).Sanitize() != nil {
		t.Fatal("Sanitize of nil must be nil")
	}
}
