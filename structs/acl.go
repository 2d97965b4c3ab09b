package structs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"time"
	"unicode/utf8"
)

// ACL token types, as Nomad names them.
const (
	ACLClientToken     = "client"
	ACLManagementToken = "management"
)

// AnonymousACLPolicy is the policy requests without a token get, if an
// operator created one; without it they may do nothing.
const AnonymousACLPolicy = "anonymous"

// Bounds on ACL objects. A policy's rules have their own bound
// (acl.MaxRulesSize), checked where they are parsed.
const (
	// MaxACLPolicyDescription bounds a policy's description, in bytes.
	MaxACLPolicyDescription = 256
	// MaxACLTokenName bounds a token's name, in bytes (Nomad's limit).
	MaxACLTokenName = 256
	// MaxACLTokenPolicies bounds how many policies one token names.
	MaxACLTokenPolicies = 64
	// MaxACLObjectsPerRequest bounds the policies or tokens one request
	// writes or deletes, so one raft entry stays small.
	MaxACLObjectsPerRequest = 100
)

// validACLPolicyName is Nomad's rule for policy names.
var validACLPolicyName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)

// ACLPolicy is a named set of rules, in Nomad's shape. Rules is the
// policy text (HCL); the servers parse it with package acl.
type ACLPolicy struct {
	Name        string
	Description string
	Rules       string
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLPolicyListStub is a policy without its rules, for lists.
type ACLPolicyListStub struct {
	Name        string
	Description string
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the list form of the policy.
func (p *ACLPolicy) Stub() *ACLPolicyListStub {
	return &ACLPolicyListStub{Name: p.Name, Description: p.Description, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
}

// Copy returns a copy (a policy has no shared references).
func (p *ACLPolicy) Copy() *ACLPolicy {
	return copyPtr(p)
}

// ValidateACLPolicyName checks a policy name against Nomad's rule.
func ValidateACLPolicyName(name string) error {
	if !validACLPolicyName.MatchString(name) {
		return fmt.Errorf("policy name %q is not valid: use 1 to 128 letters, digits and '-'", name)
	}
	return nil
}

// Validate checks what structs can check of a policy: its name and
// description, and that it has rules. The rules themselves are parsed by
// the server (package acl), which structs does not import.
func (p *ACLPolicy) Validate() error {
	pr := newProblems()
	if err := ValidateACLPolicyName(p.Name); err != nil {
		pr.add("%v", err)
	}
	if len(p.Description) > MaxACLPolicyDescription {
		pr.add("description is %d bytes; at most %d are allowed", len(p.Description), MaxACLPolicyDescription)
	}
	if p.Rules == "" {
		pr.add(`rules are empty: a policy needs at least one block, such as namespace "default" { policy = "read" }`)
	}
	return pr.err()
}

// ACLToken is a token in Nomad's shape. The servers never store or log
// SecretID: the state store and raft hold only SecretHash, the SHA-256 of
// the secret. SecretID is filled in only in the answer to the request
// that created the token, the one time its owner can learn it.
type ACLToken struct {
	AccessorID string
	SecretID   string
	// SecretHash is HashACLSecret(SecretID). It is not part of the HTTP
	// API: knowing it would let anyone test guesses offline.
	SecretHash string `json:"-"`
	Name       string
	Type       string
	Policies   []string
	Global     bool
	CreateTime time.Time
	// ExpirationTime, when set, is when the token stops resolving. It is
	// fixed at creation (CreateTime + ExpirationTTL).
	ExpirationTime *time.Time `json:",omitempty"`
	// ExpirationTTL is how long a token being created lives; it is only
	// read on creation.
	ExpirationTTL time.Duration `json:",omitempty"`
	CreateIndex   uint64
	ModifyIndex   uint64
}

// ACLTokenListStub is a token's list form: no secret.
type ACLTokenListStub struct {
	AccessorID     string
	Name           string
	Type           string
	Policies       []string
	Global         bool
	CreateTime     time.Time
	ExpirationTime *time.Time `json:",omitempty"`
	CreateIndex    uint64
	ModifyIndex    uint64
}

// HashACLSecret is the form a token's secret is stored and looked up in:
// hex SHA-256. Secrets are random UUIDs (122 random bits), so a plain
// hash cannot be reversed by guessing and needs no salt.
func HashACLSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Copy returns a deep copy.
func (t *ACLToken) Copy() *ACLToken {
	if t == nil {
		return nil
	}
	c := *t
	c.Policies = append([]string(nil), t.Policies...)
	c.ExpirationTime = copyPtr(t.ExpirationTime)
	return &c
}

// Stub returns the list form of the token.
func (t *ACLToken) Stub() *ACLTokenListStub {
	return &ACLTokenListStub{
		AccessorID: t.AccessorID, Name: t.Name, Type: t.Type, Policies: append([]string(nil), t.Policies...),
		Global: t.Global, CreateTime: t.CreateTime, ExpirationTime: t.ExpirationTime,
		CreateIndex: t.CreateIndex, ModifyIndex: t.ModifyIndex,
	}
}

// IsExpired reports whether the token has expired at now.
func (t *ACLToken) IsExpired(now time.Time) bool {
	return t.ExpirationTime != nil && !now.Before(*t.ExpirationTime)
}

// IsManagement reports whether the token is a management token.
func (t *ACLToken) IsManagement() bool { return t.Type == ACLManagementToken }

// HasPolicy reports whether the token names the policy.
func (t *ACLToken) HasPolicy(name string) bool {
	for _, p := range t.Policies {
		if p == name {
			return true
		}
	}
	return false
}

// Validate checks a token a user asks to create or update: its name, its
// type, and that a client token names valid policies (at least one) and a
// management token none. Whether the policies exist is the server's
// question. The policies are de-duplicated and sorted as a side effect,
// so the stored list reads the same however it was written.
func (t *ACLToken) Validate() error {
	pr := newProblems()
	if len(t.Name) > MaxACLTokenName {
		pr.add("name is %d bytes; at most %d are allowed", len(t.Name), MaxACLTokenName)
	}
	if !utf8.ValidString(t.Name) {
		pr.add("name is not valid UTF-8")
	}
	switch t.Type {
	case ACLClientToken:
		if len(t.Policies) == 0 {
			pr.add("a client token needs at least one policy (give -policy, or use type management)")
		}
	case ACLManagementToken:
		if len(t.Policies) != 0 {
			pr.add("a management token may do everything and takes no policies; remove %v or use type client", t.Policies)
		}
	default:
		pr.add("type %q is not valid: use %q or %q", t.Type, ACLClientToken, ACLManagementToken)
	}
	if len(t.Policies) > MaxACLTokenPolicies {
		pr.add("names %d policies; at most %d are allowed", len(t.Policies), MaxACLTokenPolicies)
	}
	for _, p := range t.Policies {
		if err := ValidateACLPolicyName(p); err != nil {
			pr.add("%v", err)
		}
	}
	if t.ExpirationTTL < 0 {
		pr.add("expiration TTL %s is negative", t.ExpirationTTL)
	}
	if t.ExpirationTTL != 0 && t.ExpirationTime != nil {
		pr.add("set either an expiration TTL or an expiration time, not both")
	}
	if err := pr.err(); err != nil {
		return err
	}
	t.Policies = sortedUnique(t.Policies)
	return nil
}

func sortedUnique(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	out := append([]string(nil), list...)
	sort.Strings(out)
	n := 1
	for _, s := range out[1:] {
		if s != out[n-1] {
			out[n] = s
			n++
		}
	}
	return out[:n]
}

// AnonymousACLToken is what a request without a token is: a client token
// whose only policy is the anonymous policy, in Nomad's shape.
func AnonymousACLToken() *ACLToken {
	return &ACLToken{
		AccessorID: "anonymous",
		Name:       "Anonymous Token",
		Type:       ACLClientToken,
		Policies:   []string{AnonymousACLPolicy},
	}
}
