// Package config is the client's configuration: what the agent's config
// file and flags produce, and what tests set directly. It has no state and
// starts nothing; NewClient reads it once.
package config
