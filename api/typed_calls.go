package api

// queryOne reads path into a new T: the body of every getter that answers
// with one decoded value and the response's QueryMeta.
func queryOne[T any](c *Client, path string, q *QueryOptions) (*T, *QueryMeta, error) {
	var out T
	qm, err := c.query(path, &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// queryList reads the list at path: the body of every list getter. Like
// the query under it, it gives back what was decoded even with an error.
func queryList[T any](c *Client, path string, q *QueryOptions) ([]T, *QueryMeta, error) {
	var out []T
	qm, err := c.query(path, &out, q)
	return out, qm, err
}

// putOne puts in to path and decodes the answer into a new T: the body of
// every write that answers with one decoded value and its WriteMeta.
func putOne[T any](c *Client, path string, in any, w *WriteOptions) (*T, *WriteMeta, error) {
	var out T
	wm, err := c.put(path, in, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}
