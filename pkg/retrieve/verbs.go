package retrieve

// Action-verb families. Tool names and capability queries usually start
// with the action ("create_coupon", "list coupons"); a query that asks to
// create something should prefer a create tool over a list tool of the
// same object. The families are general English, not taken from any
// catalog.
const (
	verbNone   = ""
	verbCreate = "create"
	verbRead   = "read"
	verbUpdate = "update"
	verbDelete = "delete"
	verbStart  = "start"
	verbStop   = "stop"
	verbSend   = "send"
)

var verbFamilies = map[string]string{
	"create": verbCreate, "add": verbCreate, "new": verbCreate, "make": verbCreate, "insert": verbCreate,
	"register": verbCreate, "generate": verbCreate, "upload": verbCreate, "save": verbCreate, "store": verbCreate,
	"write": verbCreate, "post": verbCreate, "book": verbCreate, "schedule": verbCreate, "open": verbCreate,

	"get": verbRead, "list": verbRead, "fetch": verbRead, "retrieve": verbRead, "read": verbRead,
	"show": verbRead, "view": verbRead, "search": verbRead, "find": verbRead, "query": verbRead,
	"lookup": verbRead, "look": verbRead, "browse": verbRead, "describe": verbRead, "download": verbRead,
	"check": verbRead, "count": verbRead, "display": verbRead, "inspect": verbRead, "explore": verbRead,

	"update": verbUpdate, "edit": verbUpdate, "modify": verbUpdate, "change": verbUpdate, "set": verbUpdate,
	"patch": verbUpdate, "rename": verbUpdate, "replace": verbUpdate, "move": verbUpdate, "assign": verbUpdate,
	"approve": verbUpdate, "merge": verbUpdate, "tag": verbUpdate, "label": verbUpdate,

	"delete": verbDelete, "remove": verbDelete, "drop": verbDelete, "erase": verbDelete, "destroy": verbDelete,
	"purge": verbDelete, "clear": verbDelete, "unregister": verbDelete, "uninstall": verbDelete,

	"start": verbStart, "begin": verbStart, "launch": verbStart, "run": verbStart, "execute": verbStart,
	"enable": verbStart, "resume": verbStart, "trigger": verbStart, "deploy": verbStart, "invoke": verbStart,

	"stop": verbStop, "end": verbStop, "halt": verbStop, "terminate": verbStop, "kill": verbStop,
	"disable": verbStop, "close": verbStop, "cancel": verbStop, "pause": verbStop, "abort": verbStop,

	"send": verbSend, "email": verbSend, "notify": verbSend, "reply": verbSend, "publish": verbSend,
	"share": verbSend, "forward": verbSend, "message": verbSend,
}

// queryVerb returns the family of the first action verb among the first
// three words of a capability query ("please create a coupon" → create;
// "set up a project" → create: a phrasal verb counts as a whole);
// a question without one reads ("which coupons exist" → read).
func queryVerb(words []string) string {
	n := 0
	for i, w := range words {
		if stopWords[w] {
			continue
		}
		if i+1 < len(words) {
			if f, ok := phrasalVerbs[w+" "+words[i+1]]; ok {
				return f
			}
		}
		if f, ok := verbFamilies[w]; ok {
			return f
		}
		if n++; n >= 3 {
			break
		}
	}
	if len(words) > 0 && questionWords[words[0]] {
		return verbRead
	}
	return verbNone
}

// phrasalVerbs are verbs whose particle decides the family ("set up" a
// project creates it, "turn off" stops, "get rid of" deletes).
var phrasalVerbs = map[string]string{
	"set up": verbCreate, "spin up": verbCreate, "sign up": verbCreate, "back up": verbCreate, "write down": verbCreate,
	"turn on": verbStart, "switch on": verbStart, "start up": verbStart, "boot up": verbStart, "power on": verbStart,
	"turn off": verbStop, "switch off": verbStop, "shut down": verbStop, "power off": verbStop, "call off": verbStop,
	"get rid": verbDelete, "clean up": verbDelete, "tear down": verbDelete, "take down": verbDelete,
	"throw away": verbDelete, "wipe out": verbDelete, "take out": verbDelete,
	"look up": verbRead, "find out": verbRead,
	"fill in": verbUpdate, "fill out": verbUpdate, "tick off": verbUpdate, "check off": verbUpdate, "cross off": verbUpdate,
}

// questionWords start a question; a question with no action verb asks to
// read ("which brands exist", "who owns this repo", "is there a
// coupon for …").
var questionWords = map[string]bool{
	"which": true, "what": true, "whats": true, "why": true, "who": true, "whom": true, "whose": true, "where": true,
	"when": true, "how": true, "is": true, "are": true, "was": true, "were": true, "does": true,
	"do": true, "did": true, "has": true, "have": true, "had": true,
}

// verbAgreement is +1 when the query's and the tool's action families
// agree, -1 when both have one and they differ, 0 otherwise.
func verbAgreement(qverb, tverb string) float64 {
	switch {
	case qverb == verbNone || tverb == verbNone:
		return 0
	case qverb == tverb:
		return 1
	}
	return -1
}
