package pipeline

// RemoteError is an error of one of the kinds that was raised elsewhere
// and reached this process only as its kind and message: a chain's call
// that ran on a Temporal worker (chains/temporal), or the first attempt of
// a claimed call whose outcome a retry gets back (claim.go). KindOf, the
// exit code, the HTTP status and errors.Is(err, ErrTimeout) etc. see the
// original kind.
type RemoteError struct {
	ErrKind string `json:"kind,omitempty"` // "" or "internal": none of the kinds
	Message string `json:"message"`
}

func (e *RemoteError) Error() string { return e.Message }

// Kind implements the kind lookup (KindOf).
func (e *RemoteError) Kind() string {
	if e.ErrKind == "" {
		return "internal"
	}
	return e.ErrKind
}

// Is matches the sentinel of the error's kind.
func (e *RemoteError) Is(target error) bool {
	k, ok := target.(kindError)
	return ok && string(k) == e.ErrKind
}
