package drivers

import "context"

// WaitExit is the body of WaitTask for a driver that closes done once its
// task has exited (or it stopped waiting for it) and then holds the result:
// the channel receives result() if it is not nil, then closes; ctx's end
// closes it without a result. result is read under the driver's own lock.
func WaitExit(ctx context.Context, done <-chan struct{}, result func() *ExitResult) <-chan *ExitResult {
	ch := make(chan *ExitResult, 1)
	go func() {
		defer close(ch)
		select {
		case <-done:
			if res := result(); res != nil {
				ch <- res
			}
		case <-ctx.Done():
		}
	}()
	return ch
}
