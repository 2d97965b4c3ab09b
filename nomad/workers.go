package nomad

// startWorkers starts num_schedulers scheduler workers. Every server runs
// them, followers too: they dequeue from the leader over RPC.
func (s *Server) startWorkers() {
	if s.config.NumSchedulers == 0 {
		return
	}
	var schedulers []string
	for _, t := range s.config.EnabledSchedulers {
		if t != "_core" {
			schedulers = append(schedulers, t)
		}
	}
	for i := 0; i < s.config.NumSchedulers; i++ {
		s.workers = append(s.workers, newWorker(s.ctx, s, schedulers, i, workerOptions{reportWindow: s.config.ReconnectReportWindow}))
	}
}

// stopWorkers stops the workers and waits for them.
func (s *Server) stopWorkers() {
	for _, w := range s.workers {
		w.Stop()
	}
	s.workers = nil
}
