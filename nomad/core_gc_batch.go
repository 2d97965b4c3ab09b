package nomad

// gcBatch gathers the IDs of objects of one kind the GC deletes by ID
// alone (down nodes, finished deployments) into raft entries of at most
// gcMaxObjectsPerEntry IDs. write commits one entry naming ids and
// answers its index.
type gcBatch struct {
	write func(ids []string) (uint64, error)
	ids   []string
	last  uint64
}

// add queues id, first writing the queued IDs when they fill an entry.
func (b *gcBatch) add(id string) error {
	if len(b.ids) == gcMaxObjectsPerEntry {
		if err := b.flush(); err != nil {
			return err
		}
	}
	b.ids = append(b.ids, id)
	return nil
}

// flush writes the queued IDs, if any, as one entry.
func (b *gcBatch) flush() error {
	if len(b.ids) == 0 {
		return nil
	}
	idx, err := b.write(b.ids)
	b.ids = nil
	b.last = max(b.last, idx)
	return err
}

// done writes what is left and answers the last index written.
func (b *gcBatch) done() (uint64, error) {
	err := b.flush()
	return b.last, err
}
