package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// RawRequest sends method to path (with its query, such as
// "/v1/event/stream?topic=Job") and returns the response whatever its
// status, for the caller to read and close: the `operator api` command's
// way to reach any endpoint. The client's token, namespace and region are
// added unless header or the path's query already set them. The agent
// must answer (send its headers) within the client's timeout; the body
// may then be read for as long as the caller likes, since it may be a
// stream. Closing the body releases the request.
func (c *Client) RawRequest(ctx context.Context, method, path string, header http.Header, body io.Reader) (*http.Response, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("invalid path %q: it must start with /, such as /v1/jobs", path)
	}
	u, err := url.Parse(c.baseURL.String() + path)
	if err != nil {
		return nil, fmt.Errorf("invalid path %q: %w", path, err)
	}
	q := u.Query()
	for k, v := range map[string]string{"namespace": c.config.Namespace, "region": c.config.Region} {
		if v != "" && !q.Has(k) {
			q.Set(k, v)
		}
	}
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		cancel()
		return nil, err
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if c.config.SecretID != "" && req.Header.Get("X-Nomad-Token") == "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("X-Nomad-Token", c.config.SecretID)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "drover-api")
	}
	var timer *time.Timer
	if c.config.Timeout > 0 {
		timer = time.AfterFunc(c.config.Timeout, cancel)
	}
	resp, err := c.http.Do(req)
	inTime := timer == nil || timer.Stop()
	if err != nil {
		cancel()
		if !inTime {
			return nil, &TimeoutError{Method: method, Path: path, Address: c.baseURL.String(), Limit: c.config.Timeout}
		}
		return nil, fmt.Errorf("%s %s: %w", method, path, explainTLS(err))
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelBody ends its request's context when it is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
