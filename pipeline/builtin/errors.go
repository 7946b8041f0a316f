package builtin

import (
	"fmt"

	"github.com/airs-dev/airs/pipeline"
)

// Error codes the builtin tools reject calls with. They are the Code of the
// ProviderRejected error the Manager reports, stable enough to test against.
const (
	CodeBadExpression   = "bad_expression"
	CodeDivisionByZero  = "division_by_zero"
	CodeDomain          = "domain_error"
	CodeUnknownSpace    = "unknown_space"
	CodePathEscape      = "path_escape"
	CodeNotFound        = "not_found"
	CodeNotAFile        = "not_a_file"
	CodeNotADirectory   = "not_a_directory"
	CodeTooLarge        = "too_large"
	CodeNotText         = "not_text"
	CodeBadPDF          = "bad_pdf"
	CodeBadParams       = "bad_params"
	CodeIO              = "io_error"
	CodeSummarizerError = "summarizer_error"
)

// reject is how every builtin handler refuses a call: a
// pipeline.ProviderRejected with a stable code and a message meant for the
// person or model that made the call.
func reject(code, format string, args ...any) error {
	return pipeline.Reject(code, fmt.Sprintf(format, args...))
}
