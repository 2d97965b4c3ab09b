package structs

import (
	"crypto/subtle"
	"fmt"
)

// A node proves who it is with its SecretID: the client makes it once (a
// random UUID kept in its state dir), registers with it, and sends it with
// every call it makes for itself. The node's ID is public (node lists show
// it); the secret never leaves the servers except to the node itself, so
// knowing an ID is not enough to act as that node.

// nodeSecretLen is the length of a UUID in its usual text form.
const nodeSecretLen = 36

// validNodeSecret reports whether s is a UUID in its 8-4-4-4-12 text form,
// the only form Drover's client makes. Anything else (a short guessable
// word, a value padded to exhaust memory) is refused at registration.
func validNodeSecret(s string) bool {
	if len(s) != nodeSecretLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// validateSecret adds the problems with a registering node's secret.
func (n *Node) validateSecret(p problems) {
	switch {
	case n.SecretID == "":
		p.add("node secret ID is missing")
	case !validNodeSecret(n.SecretID):
		got := "other characters"
		if len(n.SecretID) != nodeSecretLen {
			got = fmt.Sprintf("%d characters", len(n.SecretID))
		}
		p.add("node secret ID is not a UUID: want 36 characters, hexadecimal digits in groups of 8-4-4-4-12 as the client generates, got %s", got)
	case n.SecretID == n.ID:
		p.add("node secret ID must not be the node ID: the ID is public, the secret is what proves the node's identity")
	}
}

// CheckSecret authenticates a call a node makes for itself. An empty
// secret is ErrNodeSecretMissing, a different one ErrNodeSecretDenied.
// The comparison takes the same time however much of the secret matches,
// so timing the answers does not reveal it a character at a time.
func (n *Node) CheckSecret(secret string) error {
	if secret == "" {
		return fmt.Errorf("node %s: %w: a client must send its node's SecretID with every call it makes for itself", n.ID, ErrNodeSecretMissing)
	}
	if subtle.ConstantTimeCompare([]byte(n.SecretID), []byte(secret)) != 1 {
		return fmt.Errorf("node %s: %w", n.ID, ErrNodeSecretDenied)
	}
	return nil
}

// Sanitize returns a copy of the node without its secret, for every answer
// that may reach someone other than the node itself. The receiver (often a
// state store object, which must never change) is left alone.
func (n *Node) Sanitize() *Node {
	if n == nil {
		return nil
	}
	c := n.Copy()
	c.SecretID = ""
	return c
}
