package boltcheck

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func makeDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("logs"))
		if err != nil {
			return err
		}
		for i := 0; i < 2000; i++ {
			if err := b.Put([]byte{byte(i >> 8), byte(i)}, []byte(strings.Repeat("v", 300))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	return path
}

func TestCheckAcceptsGoodAndMissingFiles(t *testing.T) {
	if err := Check(makeDB(t)); err != nil {
		t.Fatalf("a good database: %v", err)
	}
	if err := Check(filepath.Join(t.TempDir(), "none.db")); err != nil {
		t.Fatalf("a missing file is created by the store: %v", err)
	}
}

// The finding: a corrupt bolt file gave a raw panic or SIGBUS naming no
// file. Every corruption must be an error naming the file.
func TestCheckTurnsCorruptionIntoAnErrorNamingTheFile(t *testing.T) {
	page := int64(os.Getpagesize())
	cases := []struct {
		name    string
		corrupt func(t *testing.T, path string)
	}{
		{"cut short", func(t *testing.T, path string) { os.Truncate(path, page+100) }},
		{"cut in the middle", func(t *testing.T, path string) {
			st, _ := os.Stat(path)
			os.Truncate(path, st.Size()/2)
		}},
		{"meta pages overwritten", func(t *testing.T, path string) { overwrite(t, path, 0, 2*page) }},
		{"data pages overwritten", func(t *testing.T, path string) { overwrite(t, path, 4*page, 8*page) }},
		{"not a database at all", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(strings.Repeat("not bolt ", 10000)), 0o600)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := makeDB(t)
			c.corrupt(t, path)
			err := Check(path)
			if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Fatalf("want ErrCorrupt naming %s, got %v", path, err)
			}
		})
	}
}

func overwrite(t *testing.T, path string, off, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := make([]byte, n)
	for i := range junk {
		junk[i] = byte(i*7 + 3)
	}
	if _, err := f.WriteAt(junk, off); err != nil {
		t.Fatal(err)
	}
}
