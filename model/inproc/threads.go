//go:build inproc

package inproc

/*
#include <stdint.h>
struct llama_context;
void llama_set_n_threads(struct llama_context * ctx, int32_t n_threads, int32_t n_threads_batch);
int32_t llama_n_threads(struct llama_context * ctx);
int32_t llama_n_threads_batch(struct llama_context * ctx);
*/
import "C"

import (
	"unsafe"

	"github.com/ollama/ollama/llama"
)

// The Go bindings of github.com/ollama/ollama/llama (v0.17.4) give a
// context one thread count for both single-token and batch decoding, and
// no setter. llama.cpp has one (llama_set_n_threads); the bindings' Context
// holds the C context as its first field, so it is read from there. The
// layout is that of the pinned version: TestThreadsSet checks it by
// reading the counts back through llama.cpp.
func cContext(c *llama.Context) *C.struct_llama_context {
	return *(**C.struct_llama_context)(unsafe.Pointer(c))
}

func setThreads(c *llama.Context, threads, batch int) {
	C.llama_set_n_threads(cContext(c), C.int32_t(threads), C.int32_t(batch))
}

// threadCounts reads back the context's single-token and batch thread counts.
func threadCounts(c *llama.Context) (int, int) {
	cc := cContext(c)
	return int(C.llama_n_threads(cc)), int(C.llama_n_threads_batch(cc))
}
