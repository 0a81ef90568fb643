package upstream

// Transport returns the configured transport of server id ("" when it is
// not configured).
func (m *Manager) Transport(id string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if s, ok := m.servers[id]; ok {
		return s.cfg.Transport
	}
	return ""
}
