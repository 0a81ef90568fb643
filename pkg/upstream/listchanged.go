package upstream

import "sync/atomic"

// ListChangedFunc receives an upstream's notifications/tools/list_changed,
// notifications/prompts/list_changed or notifications/resources/list_changed
// (method is the notification's method).
type ListChangedFunc func(server, method string)

// listChangedHook holds the function set by OnListChanged.
type listChangedHook struct {
	fn atomic.Pointer[ListChangedFunc]
}

// OnListChanged sets the function that receives every upstream's list
// change notifications (nil: drop them). A notification comes only from a
// connection that is open: a stdio server's running process or an HTTP
// server's session.
func (m *Manager) OnListChanged(fn ListChangedFunc) {
	if fn == nil {
		m.listChanged.fn.Store(nil)
		return
	}
	m.listChanged.fn.Store(&fn)
}

func (m *Manager) listChangedFunc() ListChangedFunc {
	if m == nil {
		return nil
	}
	if p := m.listChanged.fn.Load(); p != nil {
		return *p
	}
	return nil
}
