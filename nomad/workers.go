package nomad

// startWorkers starts num_schedulers scheduler workers. Every server runs
// them, followers too: they dequeue from the leader over RPC.
func (s *Server) startWorkers() {
	if s.config.NumSchedulers == 0 {
		return
	}
	for i := 0; i < s.config.NumSchedulers; i++ {
		s.workers = append(s.workers, newWorker(s.ctx, s, s.config.EnabledSchedulers, i, workerOptions{reportWindow: s.config.ReconnectReportWindow, metrics: s.metrics}))
	}
}

// stopWorkers stops the workers and waits for them.
func (s *Server) stopWorkers() {
	for _, w := range s.workers {
		w.Stop()
	}
	s.workers = nil
}
