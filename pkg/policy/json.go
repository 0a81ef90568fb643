package policy

import "encoding/json"

// policyJSON is a Policy as it travels between the gateway's own processes
// (the asynchronous invocation that runs a task on AWS Lambda).
type policyJSON struct {
	KeyID   string          `json:"key_id"`
	Admin   bool            `json:"admin,omitempty"`
	All     bool            `json:"all,omitempty"`
	Servers map[string]Rule `json:"servers,omitempty"`
}

// MarshalJSON encodes the whole policy, the grants included.
func (p Policy) MarshalJSON() ([]byte, error) {
	return json.Marshal(policyJSON{KeyID: p.KeyID, Admin: p.Admin, All: p.all, Servers: p.servers})
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (p *Policy) UnmarshalJSON(b []byte) error {
	var j policyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = Policy{KeyID: j.KeyID, Admin: j.Admin, all: j.All, servers: j.Servers}
	return nil
}
