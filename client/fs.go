package client

import (
	"fmt"
	"os"

	"github.com/drover-sched/drover/client/allocdir"
)

// Reading an alloc's directory (`alloc fs`). Paths are relative to the
// alloc dir and may not leave it; allocdir does the checking. A finished
// alloc stays readable until its directory is collected.

// AllocFileList lists a directory of an alloc's directory.
func (c *Client) AllocFileList(allocID, path string) ([]allocdir.FileInfo, error) {
	dir, err := c.allocDir(allocID)
	if err != nil {
		return nil, err
	}
	return dir.List(path)
}

// AllocFileStat describes a file or directory of an alloc's directory.
func (c *Client) AllocFileStat(allocID, path string) (allocdir.FileInfo, error) {
	dir, err := c.allocDir(allocID)
	if err != nil {
		return allocdir.FileInfo{}, err
	}
	return dir.Stat(path)
}

// AllocFileOpen opens a regular file of an alloc's directory.
func (c *Client) AllocFileOpen(allocID, path string) (*os.File, error) {
	dir, err := c.allocDir(allocID)
	if err != nil {
		return nil, err
	}
	return dir.Open(path)
}

func (c *Client) allocDir(allocID string) (*allocdir.AllocDir, error) {
	ar := c.runner(allocID)
	if ar == nil {
		return nil, fmt.Errorf("%w %s", ErrUnknownAlloc, allocID)
	}
	return ar.AllocDir(), nil
}
